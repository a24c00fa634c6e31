/** Settings the page reads at start-up. */
export interface DemoPageSettings {
  agentId: string;
  tokenTtlSeconds: number;
  /** Link the protocol and REST docs (off when API_DOCS_ENABLED is false). */
  docsLinks?: boolean;
}

/**
 * The demo chat page: a small widget built on the embed SDK as an integrator would use it. Its
 * script is `src/demo/client/`, bundled by the build into `dist/demo/client/demo.js` and served by
 * `demoRouter` at `./demo/demo.js`; it reads `settings` from a JSON data block. Every URL is
 * relative to the page, so it also works when a proxy serves the hub under a path prefix.
 */
export function demoPage(settings: DemoPageSettings): string {
  // JSON in a non-executed script element; escaping `<` keeps the data from closing the element.
  const json = JSON.stringify(settings).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>relay-hub demo</title>
<link rel="icon" href="data:,">
<style>
  :root { font: 15px/1.4 system-ui, sans-serif; color: #1d2330; background: #eef1f5; }
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; }
  main { width: min(420px, 100vw); height: min(640px, 100vh); display: flex; flex-direction: column;
    background: #fff; border-radius: 12px; box-shadow: 0 6px 24px #0002; overflow: hidden; }
  header { padding: 12px 16px; background: #1d2330; color: #fff; display: flex; gap: 8px; align-items: baseline; }
  header h1 { font-size: 16px; margin: 0; flex: 1; }
  .badge { font-size: 12px; padding: 2px 8px; border-radius: 999px; background: #fff2; }
  .badge[data-state="connected"], .badge[data-online="true"] { background: #2e7d32; }
  .badge[data-state="disconnected"], .badge[data-online="false"] { background: #b23b3b; }
  #scroller { flex: 1; overflow-y: auto; padding: 12px; display: flex; flex-direction: column; gap: 6px; }
  #earlier { align-self: center; font-size: 12px; padding: 4px 10px; background: #eef1f5; color: #1d2330; }
  #earlier[hidden] { display: none; }
  #log { display: flex; flex-direction: column; gap: 6px; margin: 0; padding: 0; list-style: none; }
  #log li { max-width: 80%; padding: 6px 10px; border-radius: 10px; white-space: pre-wrap; overflow-wrap: anywhere; }
  #log li.bot { align-self: flex-start; background: #eef1f5; }
  #log li.me { align-self: flex-end; background: #d7e7ff; }
  #log li.me[data-status="pending"] { opacity: .6; }
  #log li.me[data-status="failed"] { background: #f8d7d7; }
  #log li.operator { background: #e1f3e6; }
  #log li.operator .who { display: block; font-size: 12px; font-weight: 600; color: #1f6b35; }
  #log li.note { align-self: center; text-align: center; font-size: 12px; color: #667; background: none; }
  #log li.bot[data-streaming="true"] .text::after { content: "\\258D"; animation: blink 1s steps(2) infinite; }
  #log li.bot[data-status] .text::after { content: " \\2014 " attr(data-status); font-size: 12px; color: #667; }
  @keyframes blink { 50% { opacity: 0; } }
  .thumbs { margin-left: 6px; white-space: nowrap; }
  .thumbs button { padding: 0 3px; background: none; opacity: .45; font-size: 13px; }
  .thumbs button.up::before { content: "\\1F44D"; }
  .thumbs button.down::before { content: "\\1F44E"; }
  .thumbs button[aria-pressed="true"] { opacity: 1; }
  #activity { padding: 0 16px 6px; font-size: 12px; color: #667; font-style: italic; }
  #activity[hidden], #stop[hidden] { display: none; }
  #stop { background: #b23b3b; }
  form { display: flex; gap: 8px; padding: 12px; border-top: 1px solid #e3e6eb; }
  input { flex: 1; font: inherit; padding: 8px 10px; border: 1px solid #c9ced6; border-radius: 8px; }
  button { font: inherit; padding: 8px 14px; border: 0; border-radius: 8px; background: #1d2330; color: #fff; }
  footer { padding: 0 12px 10px; font-size: 12px; color: #667; }
  footer a { color: inherit; margin-right: 12px; }
</style>
</head>
<body>
<main>
  <header>
    <h1>relay-hub demo</h1>
    <span id="bot" class="badge" title="bot status">bot …</span>
    <span id="state" class="badge" title="connection">connecting</span>
  </header>
  <div id="scroller">
    <button id="earlier" type="button" hidden>Load earlier messages</button>
    <ol id="log" aria-live="polite"></ol>
  </div>
  <div id="activity" role="status" hidden></div>
  <form id="composer" autocomplete="off">
    <input id="text" name="text" placeholder="Say something to the echo bot" maxlength="2000" required>
    <button type="submit">Send</button>
    <button id="stop" type="button" hidden>Stop</button>
  </form>
  ${settings.docsLinks === false ? '' : '<footer><a href="./asyncapi">Relay protocol (AsyncAPI)</a><a href="./api/">REST API</a></footer>'}
</main>
<script id="demo-settings" type="application/json">${json}</script>
<script type="module" src="./demo/demo.js"></script>
</body>
</html>
`;
}
