/**
 * The operator console's page (docs/handoff.md): sign-in, then three panes — the bot's
 * conversations, one conversation's live transcript with its controls, and the bot's debug traces
 * of that conversation. Its script is `src/console/client/`, bundled into `console/console.js`.
 * Every URL is relative to the page, so it works behind a proxy that serves the hub under a prefix.
 */
export function consolePage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>relay-hub console</title>
<link rel="icon" href="data:,">
<style>
  :root { --fg: #1d2330; --muted: #525b6b; --line: #dde1e7; --bg: #f4f6f9; --panel: #fff; --accent: #2450b8;
    --waiting: #8a4b00; --waiting-bg: #fff1dc; --human: #1f6b35; --human-bg: #e1f3e6; --bot-bg: #eceff4;
    font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
  * { box-sizing: border-box; }
  body { margin: 0; height: 100vh; display: flex; flex-direction: column; }
  :focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
  button { font: inherit; padding: 8px 16px; border: 1px solid transparent; border-radius: 8px; background: var(--accent); color: #fff; cursor: pointer; }
  button.secondary { background: #fff; color: var(--fg); border-color: var(--line); }
  button:disabled { background: #c3c8d1; color: #2b3140; cursor: not-allowed; }
  input, textarea { font: inherit; padding: 8px; border: 1px solid #8c94a3; border-radius: 8px; color: var(--fg); background: #fff; }
  header.top { display: flex; align-items: center; gap: 16px; padding: 8px 16px; background: var(--fg); color: #fff; }
  header.top h1 { font-size: 16px; margin: 0; }
  header.top .who { margin-left: auto; font-size: 13px; opacity: .9; }
  header.top button { padding: 4px 12px; }
  #signin { margin: 64px auto; width: min(480px, calc(100vw - 32px)); background: var(--panel); padding: 24px; border-radius: 12px;
    box-shadow: 0 4px 16px #0001; display: flex; flex-direction: column; gap: 8px; }
  #signin h2 { margin: 0 0 8px; font-size: 18px; }
  #signin label { font-weight: 600; margin-top: 8px; }
  #signin textarea { min-height: 96px; font-family: ui-monospace, monospace; font-size: 12px; }
  #signin .error { color: #a32020; min-height: 1.5em; margin: 0; }
  #app { flex: 1; min-height: 0; display: grid; grid-template-columns: 320px minmax(0, 1fr) 360px; }
  #app[hidden], #signin[hidden] { display: none; }
  nav { border-right: 1px solid var(--line); background: var(--panel); display: flex; flex-direction: column; min-height: 0; }
  nav h2, aside h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 0; padding: 16px 16px 8px; }
  #list { list-style: none; margin: 0; padding: 0 8px 8px; overflow-y: auto; flex: 1; }
  #list li { padding: 8px; border-radius: 8px; cursor: pointer; display: grid; grid-template-columns: 1fr auto; gap: 0 8px; margin-bottom: 4px; }
  #list li:hover { background: var(--bg); }
  #list li[aria-selected="true"] { background: #e3eafb; box-shadow: inset 3px 0 0 var(--accent); }
  #list .name { font-weight: 600; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  #list .sub { grid-column: 1 / -1; color: var(--muted); font-size: 13px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  #list .empty { color: var(--muted); cursor: default; }
  .badge { font-size: 12px; padding: 0 8px; border-radius: 999px; align-self: center; background: var(--bot-bg); }
  .badge[data-control="waiting"] { background: var(--waiting-bg); color: var(--waiting); font-weight: 600; }
  .badge[data-control="human"] { background: var(--human-bg); color: var(--human); font-weight: 600; }
  .dot { display: inline-block; width: 8px; height: 8px; border-radius: 50%; background: #9aa1ad; margin-right: 4px; }
  .dot[data-online="true"] { background: #2e7d32; }
  main { display: flex; flex-direction: column; min-height: 0; background: var(--panel); }
  main > header { padding: 16px; border-bottom: 1px solid var(--line); }
  main > header h2 { margin: 0; font-size: 16px; }
  main > header p { margin: 4px 0 0; color: var(--muted); }
  /* The transcript is the widget's own, in its shadow root (src/console/client/transcript.view.ts). */
  #transcript { flex: 1; min-height: 0; display: grid; grid-template: minmax(0, 1fr) / minmax(0, 1fr); }
  #bar { border-top: 1px solid var(--line); padding: 8px 16px 16px; display: flex; flex-direction: column; gap: 8px; }
  #bar .actions { display: flex; gap: 8px; align-items: center; }
  #status { color: var(--muted); margin: 0; min-height: 1.5em; }
  #status[data-kind="error"] { color: #a32020; }
  #reply { display: flex; gap: 8px; }
  #reply textarea { flex: 1; resize: vertical; min-height: 40px; }
  aside { border-left: 1px solid var(--line); background: var(--panel); display: flex; flex-direction: column; min-height: 0; }
  #traces { overflow-y: auto; padding: 0 16px 16px; flex: 1; }
  #traces details { border: 1px solid var(--line); border-radius: 8px; margin-bottom: 8px; }
  #traces summary { padding: 8px; cursor: pointer; font-size: 13px; }
  #traces time { color: var(--muted); margin-right: 8px; font-variant-numeric: tabular-nums; }
  #traces pre { margin: 0; padding: 8px; background: var(--bg); font: 12px/1.5 ui-monospace, SFMono-Regular, Menlo, monospace;
    white-space: pre-wrap; overflow-wrap: anywhere; border-top: 1px solid var(--line); }
  .hint { color: var(--muted); padding: 0 16px; }
  @media (prefers-color-scheme: dark) {
    :root { --fg: #e8eaee; --muted: #a7aebb; --line: #323844; --bg: #0f1115; --panel: #15181e; --accent: #9dbbff;
      --waiting: #f0b45b; --waiting-bg: #3a2a12; --human: #7fd99a; --human-bg: #173222; --bot-bg: #262b35; color-scheme: dark; }
    header.top { background: #05070a; }
    button { color: #0f1115; }
    button.secondary, input, textarea { background: var(--panel); color: var(--fg); }
    input, textarea { border-color: #6b7384; }
    button:disabled { background: #3a404c; color: #c3c8d1; }
    #list li[aria-selected="true"] { background: #1f2a44; }
    #signin .error, #status[data-kind="error"] { color: #ff8a80; }
  }
  @media (max-width: 1000px) { #app { grid-template-columns: 260px minmax(0, 1fr); } aside { grid-column: 1 / -1; max-height: 40vh; border-left: 0; border-top: 1px solid var(--line); } }
  @media (max-width: 640px) { body { height: auto; min-height: 100vh; } #app { display: flex; flex-direction: column; }
    nav { max-height: 35vh; border-right: 0; border-bottom: 1px solid var(--line); } main { min-height: 75vh; } aside { max-height: none; } }
</style>
</head>
<body>
<header class="top">
  <h1>relay-hub console</h1>
  <span id="bot-label"></span>
  <span class="who" id="who"></span>
  <button type="button" class="secondary" id="signout" hidden>Sign out</button>
</header>
<form id="signin" aria-labelledby="signin-title">
  <h2 id="signin-title">Sign in</h2>
  <label for="token">Operator or admin token</label>
  <textarea id="token" name="token" required spellcheck="false" autocomplete="off"></textarea>
  <label for="agent">Bot (agentId)</label>
  <input id="agent" name="agent" required pattern="[A-Za-z0-9._:\\-]{1,128}" autocomplete="off">
  <p class="error" id="signin-error" role="alert"></p>
  <button type="submit">Open the console</button>
</form>
<div id="app" hidden>
  <nav aria-labelledby="list-title">
    <h2 id="list-title">Conversations</h2>
    <ul id="list" role="listbox" aria-labelledby="list-title" tabindex="0"></ul>
  </nav>
  <main aria-labelledby="conversation-title">
    <header>
      <h2 id="conversation-title">No conversation open</h2>
      <p id="conversation-info">Choose one in the list: up and down move, Enter opens.</p>
    </header>
    <div id="transcript"></div>
    <div id="bar">
      <div class="actions">
        <button type="button" id="takeover" disabled>Take over</button>
        <button type="button" class="secondary" id="release" disabled>Hand back</button>
      </div>
      <p id="status" role="status"></p>
      <form id="reply">
        <label for="reply-text" class="visually-hidden" style="position:absolute;left:-9999px">Reply as operator</label>
        <textarea id="reply-text" placeholder="Take over to reply" disabled rows="2"></textarea>
        <button type="submit" id="send" disabled>Reply</button>
      </form>
    </div>
  </main>
  <aside aria-labelledby="traces-title">
    <h2 id="traces-title">Debug traces</h2>
    <p class="hint" id="traces-hint">The bot's traces of the open conversation appear here.</p>
    <div id="traces"></div>
  </aside>
</div>
<script type="module" src="./console/console.js"></script>
</body>
</html>
`;
}
