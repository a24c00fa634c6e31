// deploy/nginx.conf: accepted by a real `nginx -t` in the layout the cluster runner writes, shaped
// as relay-hub needs (websocket upgrade, timeouts, forwarded headers), and behaving that way when a
// real nginx proxies to stand-in upstreams (no hub needed).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import type { Duplex } from 'node:stream';
import { join } from 'node:path';
import {
  NGINX_CONF,
  freePort,
  nginxArgs,
  nginxBinary,
  testNginxConfig,
  writeNginxConfig,
  type NginxLayout,
} from '../../deploy/cluster.cjs';
import { sleep } from '../helpers/wait';

type Directive = { name: string; args: string[]; block?: Directive[] };

/** Minimal nginx config parser: directives, quoted args, blocks, comments. */
function parseNginx(text: string): Directive[] {
  const tokens = [...text.matchAll(/#[^\n]*|"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([{};])|([^\s{};"'#]+)/g)]
    .filter((m) => !m[0].startsWith('#'))
    .map((m) => (m[3] ? { punct: m[3] } : { word: m[1] ?? m[2] ?? m[4] }));
  let i = 0;
  const block = (): Directive[] => {
    const out: Directive[] = [];
    while (i < tokens.length) {
      const t = tokens[i];
      if ('punct' in t && t.punct === '}') {
        i++;
        return out;
      }
      const words: string[] = [];
      while (i < tokens.length && 'word' in tokens[i]) words.push((tokens[i++] as { word: string }).word);
      const end = tokens[i++] as { punct?: string } | undefined;
      if (words.length === 0 || !end?.punct) throw new Error(`nginx parse error near token ${i}`);
      const [name, ...args] = words;
      out.push(end.punct === '{' ? { name, args, block: block() } : { name, args });
    }
    return out;
  };
  return block();
}

const find = (dirs: Directive[], name: string, args?: string[]) =>
  dirs.filter((d) => d.name === name && (!args || args.every((a, k) => d.args[k] === a)));
const one = (dirs: Directive[], name: string, args?: string[]) => {
  const found = find(dirs, name, args);
  if (found.length !== 1) throw new Error(`expected one ${name} ${args?.join(' ') ?? ''}, found ${found.length}`);
  return found[0];
};
const headers = (dirs: Directive[]) => Object.fromEntries(find(dirs, 'proxy_set_header').map((d) => [d.args[0].toLowerCase(), d.args[1]]));
const seconds = (v: string) => Number(/^(\d+)s?$/.exec(v)?.[1] ?? NaN);

describe('deploy/nginx.conf structure', () => {
  const root = parseNginx(readFileSync(NGINX_CONF, 'utf8'));
  const httpBlock = one(root, 'http').block!;
  const server = one(httpBlock, 'server').block!;
  const socketIo = one(server, 'location', ['/socket.io/']).block!;

  test('leaves pid, daemon and user to the command line so it runs in a container and locally', () => {
    expect(find(root, 'pid')).toEqual([]);
    expect(find(root, 'daemon')).toEqual([]);
    expect(find(root, 'user')).toEqual([]);
  });

  test('takes the upstream servers and the listen address from per-environment includes only', () => {
    const upstream = one(httpBlock, 'upstream', ['relay_hub']).block!;
    expect(find(upstream, 'server')).toEqual([]);
    expect(find(upstream, 'include').map((d) => d.args[0])).toEqual(['relay-hub/servers.conf']);
    expect(find(server, 'listen')).toEqual([]);
    expect(find(server, 'include').map((d) => d.args[0])).toEqual(['relay-hub/listen.conf']);
  });

  test('upgrades websockets on the Socket.IO path with hour-long timeouts', () => {
    const map = one(httpBlock, 'map', ['$http_upgrade', '$connection_upgrade']).block!;
    expect(find(map, 'default')[0].args).toEqual(['upgrade']);
    expect(find(socketIo, 'proxy_pass')[0].args).toEqual(['http://$relay_hub_engine_upstream']);
    expect([...find(socketIo, 'proxy_http_version'), ...find(server, 'proxy_http_version')][0].args).toEqual(['1.1']);
    expect(headers(socketIo)).toMatchObject({ upgrade: '$http_upgrade', connection: '$connection_upgrade' });
    expect(seconds(one(socketIo, 'proxy_read_timeout').args[0])).toBeGreaterThanOrEqual(3600);
    expect(seconds(one(socketIo, 'proxy_send_timeout').args[0])).toBeGreaterThanOrEqual(3600);
  });

  test('balances websocket-only handshakes by connections and pins polling sessions by address', () => {
    const upstreams = find(httpBlock, 'upstream');
    expect(upstreams.map((u) => u.args[0]).sort()).toEqual(['relay_hub', 'relay_hub_sticky']);
    const balanced = one(httpBlock, 'upstream', ['relay_hub']).block!;
    const sticky = one(httpBlock, 'upstream', ['relay_hub_sticky']).block!;
    expect(find(balanced, 'least_conn')).toHaveLength(1);
    expect(one(sticky, 'hash').args).toEqual(['$remote_addr', 'consistent']);
    // Both list the same replicas from the same include, each with its own shared-memory zone
    // (`resolve` in the compose servers needs one).
    for (const block of [balanced, sticky]) {
      expect(find(block, 'include').map((d) => d.args[0])).toEqual(['relay-hub/servers.conf']);
      expect(find(block, 'zone')).toHaveLength(1);
    }
    const map = one(httpBlock, 'map', ['$arg_transport:$arg_sid', '$relay_hub_engine_upstream']).block!;
    expect(map.map((d) => [d.name, ...d.args])).toEqual([
      ['default', 'relay_hub_sticky'],
      ['websocket:', 'relay_hub'],
    ]);
  });

  test('forwards client address and scheme on every proxied location', () => {
    // proxy_set_header is inherited only by a level that sets none itself.
    const locations = find(server, 'location');
    const proxied = locations.filter((l) => find(l.block!, 'proxy_pass').length > 0);
    expect(proxied.length).toBeGreaterThanOrEqual(2);
    for (const location of proxied) {
      const own = headers(location.block!);
      const effective = Object.keys(own).length > 0 ? own : headers(server);
      expect({ location: location.args.join(' '), ...effective }).toMatchObject({
        'x-forwarded-for': '$remote_addr',
        'x-real-ip': '$remote_addr',
        'x-forwarded-proto': '$scheme',
        // $http_host keeps the port the client used (the hub may build absolute URLs from it).
        host: '$http_host',
      });
    }
  });

  test('skips replicas that refuse connections or time out', () => {
    expect(one(server, 'proxy_next_upstream').args).toEqual(expect.arrayContaining(['error', 'timeout']));
    expect(one(socketIo, 'proxy_next_upstream').args).toEqual(expect.arrayContaining(['error', 'timeout', 'http_503']));
    expect(seconds(one(server, 'proxy_connect_timeout').args[0])).toBeLessThanOrEqual(5);
  });
});

/** A real nginx (foreground) on a layout from writeNginxConfig; stdout goes to the access log file. */
/** Stops nginx (if it still runs) and the stand-in replicas, and removes the prefix dir. */
async function stopNginx(nginx: ChildProcess | undefined, replicas: { close(): Promise<unknown> }[], dir: string): Promise<void> {
  if (nginx && nginx.exitCode === null) {
    const exited = new Promise((r) => nginx.once('exit', r));
    nginx.kill('SIGTERM');
    await exited;
  }
  await Promise.all(replicas.map((r) => r.close()));
  rmSync(dir, { recursive: true, force: true });
}

async function runNginx(layout: NginxLayout, port: number): Promise<ChildProcess> {
  const accessLog = openSync(join(layout.prefix, 'access.log'), 'a');
  const child = spawn(nginxBinary(), nginxArgs(layout), { stdio: ['ignore', accessLog, 'pipe'] });
  closeSync(accessLog);
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += c));
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`nginx exited (${code}):\n${stderr}`))));
  // nginx announces nothing when it is listening; connect until it accepts (bounded by the test timeout).
  const connects = async () => {
    for (;;) {
      const ok = await new Promise<boolean>((resolve) => {
        const s = net.connect(port, '127.0.0.1', () => resolve(true)).once('error', () => resolve(false));
        s.once('connect', () => s.destroy());
      });
      if (ok) return;
      await sleep(50);
    }
  };
  await Promise.race([connects(), exited]);
  exited.catch(() => undefined);
  return child;
}

type Seen = { url: string; headers: IncomingHttpHeaders; upstream: string };

/** Stand-in replica: echoes what it received; `draining` answers 503 to Socket.IO handshakes like a draining hub. */
async function fakeReplica(name: string, { draining = false } = {}) {
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ url: req.url ?? '', headers: req.headers, upstream: name } satisfies Seen));
  });
  const upgraded = new Set<Duplex>();
  server.on('upgrade', (req, socket: Duplex) => {
    // Upgraded sockets are no longer the server's to close; track them for close().
    upgraded.add(socket.once('close', () => upgraded.delete(socket)));
    if (draining) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    socket.write(JSON.stringify({ url: req.url ?? '', headers: req.headers, upstream: name } satisfies Seen) + '\n');
    socket.on('data', (chunk) => socket.write(chunk)); // echo, to prove bytes flow both ways
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const close = () => {
    upgraded.forEach((s) => s.destroy());
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  };
  return { close, addr: `127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Websocket-style upgrade through nginx; resolves with the status and, on 101, the first line and an echo. */
function upgrade(port: number, path: string, extra: Record<string, string> = {}) {
  return new Promise<{ status: number; seen?: Seen; echo?: string }>((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      path,
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', ...extra },
    });
    req.once('response', (res) => {
      res.resume();
      resolve({ status: res.statusCode! });
    });
    req.once('upgrade', (res, socket, head) => {
      let buffered = head.toString();
      let seen: Seen | undefined;
      socket.on('data', (chunk) => {
        buffered += chunk.toString();
        if (!seen && buffered.includes('\n')) {
          const [first, rest] = [buffered.slice(0, buffered.indexOf('\n')), buffered.slice(buffered.indexOf('\n') + 1)];
          seen = JSON.parse(first) as Seen;
          buffered = rest;
          socket.write('ping-through-nginx');
        }
        if (seen && buffered === 'ping-through-nginx') {
          socket.destroy();
          resolve({ status: res.statusCode!, seen, echo: buffered });
        }
      });
      if (buffered.includes('\n')) socket.emit('data', Buffer.alloc(0));
    });
    req.once('error', reject);
    req.end();
  });
}

function get(
  port: number,
  path: string,
  { localAddress, headers: extra }: { localAddress?: string; headers?: Record<string, string> } = {},
) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, localAddress, headers: extra, agent: false }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.once('error', reject);
  });
}

describe('nginx routing of Engine.IO requests with deploy/nginx.conf', () => {
  let dir: string;
  let nginx: ChildProcess;
  let port: number;
  const replicas: Awaited<ReturnType<typeof fakeReplica>>[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-hub-nginx-engine-'));
    replicas.push(await fakeReplica('a'), await fakeReplica('b'), await fakeReplica('c'));
    port = await freePort();
    const layout = writeNginxConfig(dir, { listen: `127.0.0.1:${port}`, servers: replicas.map((r) => r.addr) });
    nginx = await runNginx(layout, port);
  });

  afterAll(() => stopNginx(nginx, replicas, dir));

  const upstreamOf = async (path: string, localAddress: string) => {
    const res = await get(port, path, { localAddress });
    expect(res.status).toBe(200);
    return (JSON.parse(res.body) as Seen).upstream;
  };

  test('a long-polling session (handshake, polls, upgrade) stays on one replica per client address', async () => {
    // 127.0.0.x are all loopback on Linux: several client addresses without a network.
    const chosen = new Set<string>();
    // Ten addresses: the chance that the hash puts all of them on one of three replicas is 3^-9.
    for (const address of Array.from({ length: 10 }, (_, i) => `127.0.0.${i + 1}`)) {
      const seen = [
        await upstreamOf('/socket.io/?EIO=4&transport=polling&t=a1', address),
        await upstreamOf('/socket.io/?EIO=4&transport=polling&t=a2&sid=s1', address),
        await upstreamOf('/socket.io/?EIO=4&transport=polling&t=a3&sid=s1', address),
        await upstreamOf('/socket.io/?EIO=4&transport=polling&t=a4&sid=s1', address),
      ];
      const upgraded = await new Promise<string>((resolve, reject) => {
        const req = http.request({
          host: '127.0.0.1',
          port,
          localAddress: address,
          path: '/socket.io/?EIO=4&transport=websocket&sid=s1',
          headers: { Connection: 'Upgrade', Upgrade: 'websocket' },
        });
        req.once('upgrade', (_res, socket, head) => {
          let buffered = head.toString();
          const done = () => {
            socket.destroy();
            resolve((JSON.parse(buffered.slice(0, buffered.indexOf('\n'))) as Seen).upstream);
          };
          if (buffered.includes('\n')) return done();
          socket.on('data', (chunk) => {
            buffered += chunk.toString();
            if (buffered.includes('\n')) done();
          });
        });
        req.once('response', (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
        req.once('error', reject);
        req.end();
      });
      expect({ address, upstreams: new Set([...seen, upgraded]).size }).toEqual({ address, upstreams: 1 });
      chosen.add(upgraded);
    }
    // The hash spreads addresses over the replicas rather than sending everyone to one.
    expect(chosen.size).toBeGreaterThanOrEqual(2);
  });

  test('fresh websocket-only handshakes from one address are balanced over the replicas', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const res = await upgrade(port, '/socket.io/?EIO=4&transport=websocket');
      expect(res.status).toBe(101);
      seen.add(res.seen!.upstream);
    }
    expect(seen.size).toBe(3);
  });

  test('REST stays balanced by connections, not pinned', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) seen.add(await upstreamOf('/api-json', '127.0.0.1'));
    expect(seen.size).toBe(3);
  });
});

describe('nginx -t', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'relay-hub-nginx-t-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('accepts deploy/nginx.conf in the layout the cluster runner uses', async () => {
    // nginxBinary() throws "nginx not found … install it (Debian: apt-get install nginx-light)" when
    // nginx is missing: this check must fail then, never skip.
    const layout = writeNginxConfig(dir, { listen: '127.0.0.1:18080', servers: ['127.0.0.1:13001', '127.0.0.1:13002'] });
    const result = await testNginxConfig(layout);
    expect(result.output).not.toMatch(/\[(emerg|alert|crit)\]/);
    expect(result.ok).toBe(true);
  });

  test('rejects a broken include, so the check above means something', async () => {
    const layout = writeNginxConfig(dir, { listen: '127.0.0.1:18080', servers: ['127.0.0.1:13001'] });
    writeFileSync(join(layout.prefix, 'conf', 'relay-hub', 'servers.conf'), 'server 127.0.0.1:13001 max_fails=three;\n');
    const result = await testNginxConfig(layout);
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/max_fails/);
  });
});

describe('nginx proxying with deploy/nginx.conf', () => {
  let dir: string;
  let nginx: ChildProcess;
  let port: number;
  const replicas: Awaited<ReturnType<typeof fakeReplica>>[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-hub-nginx-'));
    replicas.push(await fakeReplica('live'), await fakeReplica('draining', { draining: true }));
    const dead = `127.0.0.1:${await freePort()}`; // nothing listens there
    port = await freePort();
    const layout = writeNginxConfig(dir, {
      listen: `127.0.0.1:${port}`,
      servers: [dead, replicas[1].addr, replicas[0].addr],
    });
    nginx = await runNginx(layout, port);
  });

  afterAll(() => stopNginx(nginx, replicas, dir));

  test('upgrades /socket.io/ to a websocket on a live replica, skipping dead and draining ones', async () => {
    for (let i = 0; i < 6; i++) {
      const res = await upgrade(port, '/socket.io/?EIO=4&transport=websocket', { 'X-Forwarded-For': '203.0.113.9' });
      expect(res.status).toBe(101);
      expect(res.seen!.upstream).toBe('live');
      expect(res.echo).toBe('ping-through-nginx');
      expect(res.seen!.url).toBe('/socket.io/?EIO=4&transport=websocket');
      expect(res.seen!.headers).toMatchObject({
        upgrade: 'websocket',
        connection: 'upgrade',
        // The spoofed client value is replaced: hubs trust exactly one hop.
        'x-forwarded-for': '127.0.0.1',
        'x-real-ip': '127.0.0.1',
        'x-forwarded-proto': 'http',
        host: `127.0.0.1:${port}`,
      });
    }
  });

  test('proxies REST with forwarded headers and without a Connection: upgrade', async () => {
    for (let i = 0; i < 4; i++) {
      const res = await get(port, '/api-json', { headers: { 'X-Forwarded-For': '203.0.113.9' } });
      expect(res.status).toBe(200);
      const seen = JSON.parse(res.body) as Seen;
      expect(seen.url).toBe('/api-json');
      expect(seen.headers['x-forwarded-for']).toBe('127.0.0.1');
      expect(seen.headers.connection ?? '').not.toMatch(/upgrade/i);
    }
  });

  test('serves /metrics to the local host only', async () => {
    // 127.0.0.2 is loopback on Linux but not an allowed address: it stands for "from outside".
    for (const path of ['/metrics', '/metrics/', '/METRICS', '/metrics?x=1']) {
      expect({ path, status: (await get(port, path, { localAddress: '127.0.0.2' })).status }).toEqual({ path, status: 403 });
    }
    expect((await get(port, '/metrics')).status).toBe(200);
    expect((await get(port, '/metrics-dashboard', { localAddress: '127.0.0.2' })).status).toBe(200);
  });
});
