// @ts-check
'use strict';
// nginx in front of the cluster runner's hubs (cluster.cjs): a prefix under the cluster's temp dir
// that runs deploy/nginx.conf unchanged, the command line for it, and `nginx -t` on it.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { nginxBinary } = require('./host.cjs');

const NGINX_CONF = path.join(__dirname, 'nginx.conf');

/**
 * @typedef {object} NginxLayout
 * @property {string} prefix nginx -p prefix (ends with /).
 * @property {string} confFile
 * @property {string} pidFile
 */

/**
 * Lays out an nginx prefix under `dir` that runs deploy/nginx.conf unchanged: conf/nginx.conf is a
 * symlink to it (nginx resolves includes relative to the -c path as given, not the link target), and
 * conf/relay-hub/ holds the two per-environment includes.
 * @param {string} dir
 * @param {{ listen: string, servers: string[] }} config
 * @returns {NginxLayout}
 */
function writeNginxConfig(dir, { listen, servers }) {
  const prefix = path.join(dir, 'nginx');
  const confDir = path.join(prefix, 'conf');
  fs.mkdirSync(path.join(confDir, 'relay-hub'), { recursive: true });
  const confFile = path.join(confDir, 'nginx.conf');
  fs.rmSync(confFile, { force: true });
  fs.symlinkSync(NGINX_CONF, confFile);
  const serverLines = servers.map((s) => `server ${s} max_fails=0 fail_timeout=10s;`);
  fs.writeFileSync(path.join(confDir, 'relay-hub', 'servers.conf'), `${serverLines.join('\n')}\n`);
  fs.writeFileSync(path.join(confDir, 'relay-hub', 'listen.conf'), `listen ${listen};\n`);
  // A root master runs its workers as nobody; they must be able to reach the temp dirs it creates.
  for (let d = prefix; d.startsWith(dir); d = path.dirname(d)) fs.chmodSync(d, 0o755);
  return { prefix: `${prefix}/`, confFile, pidFile: path.join(prefix, 'nginx.pid') };
}

/**
 * nginx arguments for a prefix made by writeNginxConfig; nothing outside it is touched.
 * @param {NginxLayout} layout
 * @param {{ test?: boolean }} [options]
 * @returns {string[]}
 */
function nginxArgs({ prefix, confFile, pidFile }, { test = false } = {}) {
  const globals = test ? `pid ${pidFile};` : `daemon off; pid ${pidFile};`;
  return [...(test ? ['-t', '-q'] : []), '-p', prefix, '-c', confFile, '-e', 'stderr', '-g', globals];
}

/**
 * nginx's stdout (the config logs access to /dev/stdout, which is what containers want) must be a
 * file or a pipe: Node's stdio pipes are sockets, and opening /dev/stdout on a socket fails (ENXIO).
 * @param {NginxLayout} layout
 * @returns {number}
 */
function openAccessLog(layout) {
  return fs.openSync(path.join(layout.prefix, 'access.log'), 'a');
}

/**
 * Runs `nginx -t` on a prefix; resolves to { ok, output }.
 * @param {NginxLayout} layout
 * @param {string} [bin]
 * @returns {Promise<{ ok: boolean, output: string }>}
 */
function testNginxConfig(layout, bin = nginxBinary()) {
  const accessLog = openAccessLog(layout);
  /** @type {Promise<{ ok: boolean, output: string }>} */
  const checked = new Promise((resolve, reject) => {
    const child = spawn(bin, nginxArgs(layout, { test: true }), { stdio: ['ignore', accessLog, 'pipe'] });
    let output = '';
    /** @type {import('node:stream').Readable} */ (child.stderr).on('data', (c) => (output += c));
    child.once('error', reject);
    child.once('close', (code) => resolve({ ok: code === 0, output }));
  });
  return checked.finally(() => fs.closeSync(accessLog));
}

module.exports = { NGINX_CONF, writeNginxConfig, nginxArgs, openAccessLog, testNginxConfig };
