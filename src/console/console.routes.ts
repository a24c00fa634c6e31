import { join } from 'node:path';
import express, { Router } from 'express';
import helmet from 'helmet';
import { consolePage } from './console.page';

/**
 * Directory of the console's script bundled by `npm run build` (`console.js` and its source map):
 * `<root>/dist/console/client`, whether this module runs from `dist/console` or `src/console` (tests).
 */
export const CONSOLE_CLIENT_DIR = join(__dirname, '..', '..', 'dist', 'console', 'client');

/**
 * The console runs only its own same-origin script (and the widget's highlighter beside it); its
 * styles are inline; it talks to the hub alone (REST and the /ws/operator socket). Images of a
 * message's file parts load from https URLs, as in the widget. Nothing a user or a bot wrote is
 * ever parsed as markup (the widget's transcript builds every node), and the policy would stop a
 * script if it were.
 */
const pagePolicy = helmet.contentSecurityPolicy({
  useDefaults: false,
  directives: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'", "'unsafe-inline'"],
    imgSrc: ["'self'", 'data:', 'https:'],
    connectSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
});

/**
 * The operator console (docs/handoff.md): `GET /console` serves the page, `GET /console/console.js`
 * its script. The page holds no secret: the operator signs in with an operator or admin token,
 * which the script keeps in the tab's sessionStorage and sends as a bearer token.
 */
export function consoleRouter(): Router {
  const page = consolePage();
  const router = Router();
  router.get('/console', pagePolicy, (_req, res) => {
    res.type('html').setHeader('Cache-Control', 'no-store');
    res.send(page);
  });
  router.use('/console', express.static(CONSOLE_CLIENT_DIR, { index: false, maxAge: 0 }));
  return router;
}
