// The widget's rendering cost while an answer streams (docs/widget.md, docs/benchmarks.md): a
// 4,000-token markdown answer, one token per delta at 100 deltas/s, into <relay-chat> in headless
// Chromium, with and without code blocks. Reports long tasks (over 50 ms: the goal is none), the
// longest task, and the page's scripting, layout and style time (Chrome's Performance metrics). The
// answer is fed to the widget's transcript the way the element feeds it on `message:update` (the
// whole text so far, streaming), so what is measured is the widget, not the network. Standalone:
// `npm run build && node bench/widget.mjs [--tokens=4000] [--rate=100]`; in `npm run bench -- --phases=widget`.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CHROMIUM = ['/usr/lib/chromium/chromium', '/usr/bin/chromium'];
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A markdown answer of about `tokens` tokens (a token ≈ a word with its trailing space). */
export function answer(tokens, withCode) {
  const blocks = [];
  let count = 0;
  const words = (n, seed) =>
    Array.from(
      { length: n },
      (_, i) => ['the', 'relay', 'stream', 'answer', 'token', 'widget', 'render', 'block', 'markdown', 'reader'][(i * 7 + seed) % 10],
    ).join(' ');
  for (let i = 0; count < tokens; i++) {
    const kind = i % (withCode ? 6 : 5);
    let block;
    if (kind === 0) block = `## Section ${i}\n\n${words(40, i)}, with **bold**, *emphasis* and \`inline code\`.`;
    else if (kind === 1) block = `- ${words(8, i)}\n- ${words(9, i + 1)}\n- [x] ${words(6, i + 2)}\n- ~~${words(5, i + 3)}~~`;
    else if (kind === 2)
      block = `| column | value | note |\n|---|---:|---|\n${Array.from({ length: 5 }, (_, r) => `| row ${r} | ${r * 42} | ${words(4, r)} |`).join('\n')}`;
    else if (kind === 3) block = `> ${words(30, i)}\n\nSee [the docs](https://relay.example/docs/${i}) for more.`;
    else if (kind === 4) block = words(60, i) + '.';
    else
      block =
        '```' +
        (i % 2 ? 'javascript' : 'python') +
        '\n' +
        Array.from({ length: 12 }, (_, l) =>
          i % 2 ? `const value${l} = compute(${l}, 'x'); // step ${l}` : `value_${l} = compute(${l}, "x")  # step ${l}`,
        ).join('\n') +
        '\n```';
    blocks.push(block);
    count += block.split(/\s+/).length;
  }
  return blocks.join('\n\n');
}

function serve() {
  const dist = join(ROOT, 'dist', 'sdk');
  const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.map': 'application/json' };
  const server = createServer((req, res) => {
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        '<!doctype html><html lang="en"><body style="margin:0"><div id="box" style="height:100vh"></div><script type="module" src="/sdk/widget.mjs"></script></body></html>',
      );
      return;
    }
    const file = normalize(join(dist, (req.url ?? '').replace(/^\/sdk\//, '').split('?')[0]));
    try {
      if (!file.startsWith(dist)) throw new Error('outside');
      const body = readFileSync(file);
      res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function run(browser, url, text, rate) {
  const page = await browser.newPage({ viewport: { width: 420, height: 720 } });
  await page.goto(url);
  await page.waitForFunction(() => customElements.get('relay-chat') !== undefined);
  await page.evaluate(() => {
    const el = document.createElement('relay-chat');
    el.setAttribute('mode', 'inline');
    document.getElementById('box').appendChild(el);
    el.transcript.upsert({ id: 'q', author: 'user', text: 'Tell me everything.' });
  });
  // Measured from here: the page and the widget are up, as when a user asks.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.evaluate(() => {
    window.longTasks = [];
    new PerformanceObserver((list) => window.longTasks.push(...list.getEntries().map((e) => e.duration))).observe({
      type: 'longtask',
      buffered: false,
    });
  });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const metrics = async () => Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
  const tokens = text.match(/\S+\s*|\s+/g);
  const before = await metrics();
  const started = Date.now();
  await page.evaluate(
    ({ tokens, rate }) =>
      new Promise((done) => {
        const el = document.querySelector('relay-chat');
        let i = 0;
        let text = '';
        const timer = setInterval(() => {
          text += tokens[i++];
          const last = i >= tokens.length;
          el.transcript.upsert({ id: 'a', author: 'agent', text, streaming: !last });
          if (last) {
            clearInterval(timer);
            requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 500)));
          }
        }, 1000 / rate);
      }),
    { tokens, rate },
  );
  const wall = (Date.now() - started) / 1000;
  const after = await metrics();
  const longTasks = await page.evaluate(() => window.longTasks);
  const shown = await page.evaluate(() => document.querySelector('relay-chat').shadowRoot.querySelector('.msg.bot .md').textContent.length);
  await page.close();
  const d = (k) => after[k] - before[k];
  return {
    tokens: tokens.length,
    chars: text.length,
    wallS: wall,
    longTasks: longTasks.filter((t) => t > 50).length,
    longestTaskMs: Math.max(0, ...longTasks),
    scriptS: d('ScriptDuration'),
    layoutS: d('LayoutDuration'),
    styleS: d('RecalcStyleDuration'),
    taskS: d('TaskDuration'),
    shownChars: shown,
  };
}

/** Runs both answers; `log` reports progress. */
export async function widgetPhase({ log = console.error, tokens = 4000, rate = 100 } = {}) {
  const { chromium } = createRequire(import.meta.url)('playwright-core');
  const executablePath = CHROMIUM.find((p) => {
    try {
      readFileSync(p);
      return true;
    } catch {
      return false;
    }
  });
  const server = await serve();
  const browser = await chromium.launch({ executablePath, headless: true, args: ARGS });
  const url = `http://127.0.0.1:${server.address().port}/`;
  const results = {};
  try {
    for (const [name, withCode] of [
      ['without code blocks', false],
      ['with code blocks', true],
    ]) {
      log(`widget: streaming ${tokens} tokens at ${rate} deltas/s (${name})…`);
      results[name] = await run(browser, url, answer(tokens, withCode), rate);
    }
  } finally {
    await browser.close();
    server.close();
  }
  return { tokens, rate, results };
}

export function widgetTable({ tokens, rate, results }) {
  const rows = Object.entries(results).map(
    ([name, r]) =>
      `| ${name} | ${r.tokens} / ${(r.chars / 1024).toFixed(1)} KB | ${r.wallS.toFixed(1)} s | ${r.longTasks} | ${r.longestTaskMs.toFixed(0)} ms | ${(r.scriptS * 1000).toFixed(0)} ms | ${((r.layoutS + r.styleS) * 1000).toFixed(0)} ms | ${(r.taskS * 1000).toFixed(0)} ms |`,
  );
  return [
    `Widget streaming in headless Chromium: a ${tokens}-token markdown answer, one token per delta at ${rate} deltas/s (bench/widget.mjs)`,
    '',
    '| answer | deltas / size | wall | long tasks > 50 ms | longest task | scripting | layout + style | all main-thread tasks |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
  const out = await widgetPhase({ tokens: Number(args.tokens ?? 4000), rate: Number(args.rate ?? 100) });
  process.stdout.write(`${widgetTable(out)}\n`);
}
