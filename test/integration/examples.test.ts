// The example bots of examples/ run as they are against a real hub and the fake OpenAI-compatible
// endpoint replaying recorded streams (docs/testing.md#fake-model-endpoint), so they cannot rot. The
// Python example's test is sdk/python/tests/test_examples.py.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Socket } from 'socket.io-client';
import type { MessageEnd } from '../../src/protocol';
import { clientSocket, connected, nextEvent, startHub, type TestHub } from '../helpers/hub';
import { mintToken, TEST_AGENT_KEY } from '../helpers/tokens';
import { startFakeOpenAI } from '../helpers/fake-openai.cjs';

const ROOT = join(__dirname, '..', '..');
const BOT = join(ROOT, 'examples', 'ai-sdk-bot', 'bot.mjs');

let hub: TestHub;
let fake: Awaited<ReturnType<typeof startFakeOpenAI>>;
const children: ChildProcess[] = [];
const sockets: Socket[] = [];

beforeAll(async () => {
  // The example imports @relay-hub/agent as users do: the workspace package, built from src/sdk/agent.
  if (!existsSync(join(ROOT, 'sdk', 'agent', 'dist', 'sdk', 'agent', 'index.js'))) {
    execFileSync(process.execPath, [join(ROOT, 'sdk', 'agent', 'build.mjs')], { cwd: ROOT, stdio: 'inherit' });
  }
  hub = await startHub();
  fake = await startFakeOpenAI();
}, 120_000);
afterAll(async () => {
  await fake?.close();
  await hub?.close();
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.disconnect();
  for (const child of children.splice(0)) {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  }
});

/** Runs the example as `agentId`; resolves once it printed that it is connected. */
async function runExample(agentId: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BOT], {
    cwd: join(ROOT, 'examples', 'ai-sdk-bot'),
    env: {
      ...process.env,
      RELAY_HUB_URL: hub.url,
      AGENT_API_KEY: TEST_AGENT_KEY,
      AGENT_ID: agentId,
      OPENAI_BASE_URL: fake.url,
      OPENAI_MODEL: 'gpt-4o-mini',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes(`connected as ${agentId}`) && resolve());
    child.once('exit', (code) => reject(new Error(`the example exited with ${code}: ${err}`)));
  });
  return child;
}

async function tab(agentId: string): Promise<Socket> {
  const socket = clientSocket(hub.url, { token: mintToken({ sub: 'u1' }), agentId });
  sockets.push(socket);
  await connected(socket);
  return socket;
}

it('the AI SDK example answers with the tool calls it ran and the text of the second step, streamed as parts', async () => {
  await runExample('example-tools');
  const socket = await tab('example-tools');
  const ended = nextEvent<MessageEnd>(socket, 'message:end');
  const ack = (await socket.timeout(10_000).emitWithAck('message', { clientMessageId: 'c1', text: 'tool' })) as { ok: boolean };
  expect(ack.ok).toBe(true);
  const end = await ended;
  expect(end.status).toBe('complete');
  expect(end.parts?.map((p) => (p.type === 'tool' ? `${p.toolName}:${p.state}` : p.type))).toEqual([
    'get_weather:output-available',
    'get_weather:output-available',
    'text',
  ]);
  expect(end.text).toBe('It is 18 °C in Paris and 21 °C in Lyon.');
  // The model saw the tools, then their results in a second request.
  const requests = fake.requests.slice(-2);
  expect(requests.map((r) => r.recording)).toEqual(['tool', 'tool-result']);
  expect(requests[0].body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['get_weather']);
}, 30_000);

it('the AI SDK example streams reasoning_content as a reasoning part before the text', async () => {
  await runExample('example-reasoning');
  const socket = await tab('example-reasoning');
  const ended = nextEvent<MessageEnd>(socket, 'message:end');
  await socket.timeout(10_000).emitWithAck('message', { clientMessageId: 'c2', text: 'reasoning' });
  const end = await ended;
  expect(end.parts?.map((p) => p.type)).toEqual(['reasoning', 'text']);
  expect(end.text).toBe('There are **3** r\'s in "strawberry".');
}, 30_000);
