import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import express, { Router } from 'express';
import helmet from 'helmet';
import type { JwtService } from '../auth/jwt.service';
import { ValidationError } from '../http/errors';
import { demoPage } from './demo.page';
import { PARTS_IMAGE, PARTS_IMAGE_PATH } from './demo.parts';

/** The bot the demo page talks to; the in-process echo agent serves it. */
export const DEMO_AGENT_ID = 'demo-echo';

export interface DemoDeps {
  /** Signs the demo tokens with the hub's current secret. */
  jwt: Pick<JwtService, 'sign'>;
  /** The bot the page chats with; demo tokens are limited to it. Default {@link DEMO_AGENT_ID}. */
  agentId?: string;
  /** Lifetime of a demo token. Short, so the page exercises the SDK's in-band refresh. Default 300. */
  tokenTtlSeconds?: number;
  /** Link `/asyncapi` and `/api` from the page. Default true. */
  docsLinks?: boolean;
}

/**
 * Directory of the page's script bundled by `npm run build` (`demo.js` and its source map):
 * `<root>/dist/demo/client`, whether this module runs from `dist/demo` or from `src/demo` (tests).
 */
export const DEMO_CLIENT_DIR = join(__dirname, '..', '..', 'dist', 'demo', 'client');

/**
 * The page runs only its own same-origin script files (the demo bundle and the SDK it imports), so
 * markup slipped into the page could run nothing; its styles are inline, its settings a JSON data
 * block (never executed), its only connection the hub itself.
 */
const pagePolicy = helmet.contentSecurityPolicy({
  useDefaults: false,
  directives: {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'", "'unsafe-inline'"],
    imgSrc: ["'self'", 'data:'],
    connectSrc: ["'self'"],
    objectSrc: ["'none'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'self'"],
  },
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The development demo: `GET /` serves the chat widget on a plain page (`/sdk/widget.mjs`), its
 * script is `GET /demo/demo.js` (bundled at build time from `src/demo/client/`), and
 * `POST /demo/token` mints a short-lived client token for an anonymous demo user. The token route
 * is unauthenticated, so this router is mounted only when `DEMO_ENABLED` (never in production);
 * its tokens carry `agentIds: [agentId]`, so they open no other bot.
 *
 * `POST /demo/token` takes `{ user? }`: the id from an earlier answer, to keep the same `sub`
 * across refreshes (the hub refuses a refresh for another `sub`); without it a new user is made.
 * It answers 201 `{ data: { token, expiresAt, user }, success: true }`.
 *
 * @example
 * if (config.DEMO_ENABLED) app.use(demoRouter({ jwt }));
 */
export function demoRouter(deps: DemoDeps): Router {
  const agentId = deps.agentId ?? DEMO_AGENT_ID;
  const tokenTtlSeconds = deps.tokenTtlSeconds ?? 300;
  const page = demoPage({ agentId, tokenTtlSeconds, docsLinks: deps.docsLinks ?? true });
  const router = Router();

  router.get('/', pagePolicy, (_req, res) => {
    res.type('html').setHeader('Cache-Control', 'no-store');
    res.send(page);
  });

  // Revalidated on every load (ETag), so a page never runs the script of an older build.
  router.use('/demo', express.static(DEMO_CLIENT_DIR, { index: false, maxAge: 0 }));

  // The image of the bot's "parts" answer: the hub's own, so the demo shows a file part without a third party.
  router.get(PARTS_IMAGE_PATH, (_req, res) => {
    res.type('image/svg+xml').setHeader('Cache-Control', 'public, max-age=3600');
    // Widgets embed it from other origins.
    res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
    res.send(PARTS_IMAGE);
  });

  router.post('/demo/token', express.json({ limit: '1kb' }), (req, res) => {
    const requested: unknown = (req.body as { user?: unknown } | undefined)?.user;
    if (requested !== undefined && (typeof requested !== 'string' || !UUID.test(requested))) {
      throw new ValidationError([{ path: 'body.user', message: 'must be a user id returned by this route' }]);
    }
    const user = requested?.toLowerCase() ?? randomUUID();
    const { token, expiresAt } = deps.jwt.sign({ sub: `demo-${user}`, agentIds: [agentId] }, tokenTtlSeconds);
    res.setHeader('Cache-Control', 'no-store');
    res.status(201).json({ data: { token, expiresAt: expiresAt.toISOString(), user }, success: true });
  });

  return router;
}
