// @ts-check
'use strict';
// What the cluster runner (cluster.cjs) takes from this machine: free TCP ports, and the nginx and
// redis-server binaries (named by an environment variable, else found on PATH or in the usual places).

const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

/**
 * Asks the kernel for a free TCP port on `host`.
 * @param {string} [host]
 * @returns {Promise<number>}
 */
async function freePort(host = '127.0.0.1') {
  const server = net.createServer();
  server.listen(0, host);
  await new Promise((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = /** @type {net.AddressInfo} */ (server.address());
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * `envVar` when set, else the first executable of `names` on PATH or among `fallbacks`.
 * @param {string} envVar
 * @param {string[]} names
 * @param {string[]} [fallbacks]
 * @returns {string}
 */
function findExecutable(envVar, names, fallbacks = []) {
  const set = process.env[envVar];
  if (set) return set;
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  const candidates = [...names.flatMap((n) => dirs.map((d) => path.join(d, n))), ...fallbacks];
  for (const candidate of candidates) {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not this one
    }
  }
  throw new Error(
    `${names[0]} not found (looked on PATH and in ${fallbacks.join(', ') || 'no other place'}); ` +
      `install it (Debian: apt-get install ${names[0] === 'nginx' ? 'nginx-light' : 'redis-server'}) ` +
      `or point ${envVar} at the binary`,
  );
}

/** @returns {string} */
function nginxBinary() {
  return findExecutable('NGINX_BIN', ['nginx'], ['/usr/sbin/nginx', '/usr/local/sbin/nginx']);
}

/** @returns {string} */
function redisBinary() {
  return findExecutable('REDIS_SERVER_BIN', ['redis-server'], ['/usr/bin/redis-server', '/usr/local/bin/redis-server']);
}

module.exports = { freePort, nginxBinary, redisBinary };
