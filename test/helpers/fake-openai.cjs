// A local stand-in for an OpenAI-compatible endpoint (POST /v1/chat/completions with stream: true)
// that replays recorded server-sent-event streams from test/fixtures/model-streams/openai, so the
// examples and adapters are tested against the wire format without a network or a model.
// Used from jest (`startFakeOpenAI()`) and from pytest or a shell (`node test/helpers/fake-openai.cjs`
// prints one JSON line `{"url": "http://127.0.0.1:PORT/v1"}` and serves until stdin closes or SIGTERM).
// Which recording answers is in docs/testing.md#fake-model-endpoint.
'use strict';
const { readFileSync, readdirSync } = require('node:fs');
const { createServer } = require('node:http');
const { join } = require('node:path');

const FIXTURES = join(__dirname, '..', 'fixtures', 'model-streams', 'openai');

/**
 * The recorded streams by name (file name without `.sse`), each a list of SSE events as sent.
 * @param {string} dir
 * @returns {Map<string, string[]>}
 */
function loadRecordings(dir = FIXTURES) {
  const recordings = new Map();
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.sse')) continue;
    const events = readFileSync(join(dir, file), 'utf8')
      .split(/\n\n/)
      .filter((event) => event.trim() !== '')
      .map((event) => `${event}\n\n`);
    recordings.set(file.slice(0, -'.sse'.length), events);
  }
  return recordings;
}

/**
 * The text of a chat message's content: a string, or the text parts of a content array.
 * @param {unknown} content
 */
function contentText(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part && part.type === 'text' ? String(part.text) : '')).join('');
  return '';
}

/**
 * The recording that answers `body`: `tool-result` once the conversation ends with tool results (the
 * second step of a tool call); else the one named by the last user message, trimmed and lower-cased
 * (`reasoning`, `tool`, `text`); else `text`.
 * @param {{ messages?: Array<{ role?: string, content?: unknown }> }} body
 * @param {Map<string, string[]>} recordings
 */
function pickRecording(body, recordings) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages[messages.length - 1];
  if (last && last.role === 'tool' && recordings.has('tool-result')) return 'tool-result';
  const lastUser = [...messages].reverse().find((message) => message && message.role === 'user');
  const asked = lastUser ? contentText(lastUser.content).trim().toLowerCase() : '';
  return recordings.has(asked) ? asked : 'text';
}

/**
 * Starts the fake endpoint on 127.0.0.1 and a free port.
 * @param {{ delayMs?: number, dir?: string }} [options] `delayMs` between two events (0: as fast as the socket takes them)
 * @returns {Promise<{ url: string, requests: Array<{ path: string, authorization?: string, body: any, recording: string, aborted: boolean }>, setDelay(ms: number): void, close(): Promise<void> }>}
 */
async function startFakeOpenAI(options = {}) {
  const recordings = loadRecordings(options.dir);
  let delayMs = options.delayMs ?? 0;
  /** @type {Array<{ path: string, authorization?: string, body: any, recording: string, aborted: boolean }>} */
  const requests = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || !/^(\/v1)?\/chat\/completions$/.test(req.url ?? '')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' } }));
        return;
      }
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'the body is not JSON', type: 'invalid_request_error' } }));
        return;
      }
      if (body.stream !== true) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: { message: 'this fake endpoint only replays streams: set stream: true', type: 'invalid_request_error' },
          }),
        );
        return;
      }
      const recording = pickRecording(body, recordings);
      const entry = { path: req.url ?? '', authorization: req.headers.authorization, body, recording, aborted: false };
      requests.push(entry);
      replay(res, recordings.get(recording) ?? [], entry);
    });
  });

  /** Writes the events one by one, `delayMs` apart; stops when the client goes away (a stop). */
  function replay(res, events, entry) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
    let next = 0;
    let timer;
    res.on('close', () => {
      clearTimeout(timer);
      if (next < events.length) entry.aborted = true;
    });
    const step = () => {
      if (res.destroyed) return;
      if (next >= events.length) {
        res.end();
        return;
      }
      res.write(events[next++]);
      timer = setTimeout(step, delayMs);
    };
    step();
  }

  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    setDelay(ms) {
      delayMs = ms;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

module.exports = { startFakeOpenAI, loadRecordings, pickRecording, FIXTURES };

if (require.main === module) {
  const delayMs = Number(process.env.FAKE_OPENAI_DELAY_MS ?? 0);
  void startFakeOpenAI({ delayMs }).then((fake) => {
    process.stdout.write(`${JSON.stringify({ url: fake.url })}\n`);
    const stop = () => void fake.close().then(() => process.exit(0));
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    // Dies with its parent: pytest closes the pipe when it ends, even when killed.
    process.stdin.on('end', stop);
    process.stdin.resume();
  });
}
