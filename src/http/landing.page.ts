import { Router } from 'express';

/** What the landing page links to: the docs only when the hub serves them (API_DOCS_ENABLED). */
export interface LandingSettings {
  docs: boolean;
}

/** The page at `/` when the demo is off (production): what this server is and where its docs are. */
export function landingPage({ docs }: LandingSettings): string {
  const links = [
    ...(docs
      ? [
          ['./api/', 'REST API', 'interactive docs (Swagger UI); the raw spec is ./api-json'],
          ['./asyncapi', 'Relay protocol', 'the Socket.IO events of /ws/client and /ws/agent (AsyncAPI); the document is ./asyncapi.json'],
        ]
      : []),
    ['./sdk/embed.mjs', 'Browser SDK', 'RelayChat as an ES module; ./sdk/embed.js defines the global RelayChat'],
    ['./health/ready', 'Readiness', '200 when this replica can serve'],
  ];
  const items = links.map(([href, name, what]) => `<li><a href="${href}">${name}</a> — ${what}</li>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>relay-hub</title>
<link rel="icon" href="data:,">
<style>
  :root { font: 16px/1.5 system-ui, sans-serif; color: #1d2330; background: #eef1f5; }
  main { max-width: 40rem; margin: 3rem auto; padding: 1.5rem 2rem; background: #fff; border-radius: 12px; box-shadow: 0 6px 24px #0002; }
  h1 { margin-top: 0; } li { margin: .4rem 0; } code { background: #eef1f5; padding: 0 .3em; border-radius: 4px; }
</style>
</head>
<body>
<main>
<h1>relay-hub</h1>
<p>A realtime relay between chat-bot agent runtimes (<code>/ws/agent</code>) and browser chat widgets
(<code>/ws/client</code>), over Socket.IO.</p>
<ul>
${items}
</ul>
<p>${docs ? '' : 'The interactive docs are off on this server (<code>API_DOCS_ENABLED=false</code>). '}The guides are in the
repository's <code>docs/</code> folder; with <code>DEMO_ENABLED</code> (outside production) this page is a demo chat.</p>
</main>
</body>
</html>
`;
}

/**
 * `GET /`: the landing page (mounted after the demo's router, which takes `/` when it is on), and
 * `GET /favicon.ico`: 204, so a browser's icon request is not logged as a 404.
 */
export function landingRouter(settings: LandingSettings): Router {
  const page = landingPage(settings);
  const router = Router();
  router.get('/', (_req, res) => {
    res.type('html').setHeader('Cache-Control', 'no-cache');
    res.send(page);
  });
  router.get('/favicon.ico', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.status(204).end();
  });
  return router;
}
