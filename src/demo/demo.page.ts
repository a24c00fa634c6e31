/** Settings the page reads at start-up. */
export interface DemoPageSettings {
  agentId: string;
  tokenTtlSeconds: number;
  /** Link the protocol and REST docs (off when API_DOCS_ENABLED is false). */
  docsLinks?: boolean;
}

/**
 * The demo page: the chat widget (docs/widget.md) on a plain page, as an integrator's site would
 * have it. Its script is `src/demo/client/`, bundled by the build into `dist/demo/client/demo.js` and
 * served by `demoRouter` at `./demo/demo.js`; it reads `settings` from a JSON data block and loads the
 * widget the hub serves. Every URL is relative to the page, so it also works when a proxy serves the
 * hub under a path prefix.
 */
export function demoPage(settings: DemoPageSettings): string {
  // JSON in a non-executed script element; escaping `<` keeps the data from closing the element.
  const json = JSON.stringify(settings).replace(/</g, '\\u003c');
  const links =
    settings.docsLinks === false ? '' : '<p><a href="./asyncapi">Relay protocol (AsyncAPI)</a> · <a href="./api/">REST API</a></p>';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>relay-hub demo</title>
<link rel="icon" href="data:,">
<style>
  body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: #1b1f27; background: #f3f4f6; }
  main { max-width: 560px; padding: 48px 24px; }
  h1 { font-size: 24px; margin: 0 0 16px; }
  a { color: #1f4fc2; }
</style>
</head>
<body>
<main>
  <h1>relay-hub demo</h1>
  <p>The chat widget, as one script on a plain page: it talks to an echo bot that streams its answers.
  Open it with the button at the bottom right.</p>
  ${links}
</main>
<script id="demo-settings" type="application/json">${json}</script>
<script type="module" src="./demo/demo.js"></script>
</body>
</html>
`;
}
