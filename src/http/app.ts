import { join } from 'node:path';
import express, { Router, type Express } from 'express';
import helmet from 'helmet';
import { publicUrl } from '../config/public-url';
import type { HubMetrics } from '../metrics/metrics';
import { asyncApiRouter, loadAsyncApiDocument } from './asyncapi.docs';
import { apiDocsRouter } from './docs';
import { restCors } from './cors.middleware';
import { notFoundHandler, problemMiddleware } from './error.middleware';
import { RegisterRoutes } from './generated/routes';
import { createHttpServices, provideServices, type HttpServiceDeps } from './http-services';
import { jsonBody } from './json-body.middleware';
import { landingRouter } from './landing.page';
import { metricsAuth } from './metrics-auth.middleware';

export type { ReadinessProbe } from './http-services';

/** The service deps plus what only the app itself uses. */
export interface HttpDeps extends HttpServiceDeps {
  metrics: HubMetrics;
  /**
   * Routers mounted after the SDK, docs and metrics and before the REST routes, so they parse
   * their own bodies and never see the REST 415 rule (the demo page).
   */
  routers?: Router[];
  /** The AsyncAPI document to serve; loaded from the build (with PUBLIC_URL) when not given. */
  asyncApi?: Record<string, unknown>;
}

/**
 * Directory of the browser SDK bundles built by `npm run build`: `<root>/dist/sdk`, whether this
 * module runs from `dist/http` or from `src/http` (tests).
 */
export const SDK_DIR = join(__dirname, '..', '..', 'dist', 'sdk');

/**
 * The Express app: SDK files, API docs, metrics, optional routers, the landing page at `/`, the
 * tsoa REST routes (health included), then problem+json errors. Mounts them on `app` (a new one by default), which may
 * already be the HTTP server's request handler. No listening here.
 */
export function createHttpApp(deps: HttpDeps, app: Express = express()): Express {
  const { config } = deps;
  app.disable('x-powered-by');
  app.set('trust proxy', config.TRUST_PROXY);
  app.use(helmet({ contentSecurityPolicy: false }));
  provideServices(app.locals, createHttpServices(deps));

  // Other sites embed the SDK: allow cross-origin loads of these files only.
  app.use(
    '/sdk',
    (_req, res, next) => {
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
      next();
    },
    express.static(SDK_DIR, { fallthrough: false, maxAge: '5m' }),
  );

  if (config.API_DOCS_ENABLED) {
    app.use(apiDocsRouter());
    app.use(asyncApiRouter(deps.asyncApi ?? loadAsyncApiDocument(publicUrl(config))));
  }

  app.get('/metrics', metricsAuth(config.METRICS_TOKEN), async (_req, res) => {
    res.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });

  for (const router of deps.routers ?? []) app.use(router);
  app.use(landingRouter({ docs: config.API_DOCS_ENABLED }));

  const rest = Router();
  rest.use(restCors(config.CORS_ORIGINS), jsonBody(config.REST_BODY_LIMIT_BYTES));
  RegisterRoutes(rest);
  app.use(rest);

  app.use(notFoundHandler);
  app.use(problemMiddleware(deps.logger));
  return app;
}
