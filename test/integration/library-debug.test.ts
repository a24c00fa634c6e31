import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Where `name` takes its `debug` module from. */
const debugOf = (name: string) => createRequire(require.resolve(name)).resolve('debug');

/** Runs a script in a fresh Node process (the built code, as `npm start` runs it); its exit code and output. */
function run(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const withoutDebug = () => {
  const env = { ...process.env };
  delete env.DEBUG;
  return env;
};

// A Socket.IO server and client in one process, after quietLibraryDebug: one event with an ack.
const ROUND_TRIP = `
const { quietLibraryDebug } = require('./dist/logging/library-debug');
const replaced = quietLibraryDebug();
const { Server } = require('socket.io');
const { io } = require('socket.io-client');
const server = new Server(0);
server.on('connection', (socket) => socket.on('ping', (n, ack) => ack(n + 1)));
const client = io('http://127.0.0.1:' + server.httpServer.address().port, { transports: ['websocket'] });
client.emit('ping', 41, (answer) => {
  const loggers = replaced.map((path) => require(path)('relay-hub:test'));
  console.log(JSON.stringify({ replaced, answer, enabled: loggers.map((l) => l.enabled), colored: loggers.map((l) => 'useColors' in l) }));
  client.close();
  server.close();
});`;

describe('quietLibraryDebug', () => {
  it("replaces the message path's debug modules with quiet ones, and Socket.IO still relays", async () => {
    const { code, stdout, stderr } = await run(ROUND_TRIP, withoutDebug());
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const result = JSON.parse(stdout) as { replaced: string[]; answer: number; enabled: boolean[]; colored: boolean[] };
    expect(result.answer).toBe(42);
    expect(result.replaced).toEqual(expect.arrayContaining(['socket.io', 'engine.io', 'socket.io-parser', 'ioredis'].map(debugOf)));
    expect(result.enabled.every((enabled) => !enabled)).toBe(true);
    // The real module's loggers carry `useColors`; the quiet ones are bare functions.
    expect(result.colored.some(Boolean)).toBe(false);
  });

  it('leaves the debug modules alone when DEBUG is set, so their output works as documented', async () => {
    const { code, stdout, stderr } = await run(ROUND_TRIP, { ...withoutDebug(), DEBUG: 'socket.io:socket' });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ replaced: [], answer: 42 });
    expect(stderr).toMatch(/socket\.io:socket/);
  });

  it('is applied by the process entry before the hub loads Socket.IO, unless DEBUG is set', async () => {
    // Starts dist/main.js in this process and, once it listens, reports whether Engine.IO's loggers are quiet.
    const script = `
const { createRequire } = require('node:module');
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  if (String(chunk).includes('listening on')) {
    const debug = require.cache[createRequire(require.resolve('engine.io')).resolve('debug')].exports;
    process.stderr.write('QUIET=' + !('useColors' in debug('relay-hub:test')) + '\\n');
    process.exit(0);
  }
  return write(chunk, ...rest);
};
require('./dist/main.js');`;
    const env = { ...withoutDebug(), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', REDIS_URL: '', JWT_SECRET: 'x'.repeat(32) };
    const quiet = await run(script, env);
    expect(quiet.stderr).toMatch(/^QUIET=true$/m);
    const debugging = await run(script, { ...env, DEBUG: 'socket.io:server' });
    expect(debugging.stderr).toMatch(/^QUIET=false$/m);
    expect(debugging.stderr).toMatch(/socket\.io:server/);
  });
});
