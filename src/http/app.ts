import { join } from 'node:path';
import express, { Router, type Express } from 'express';
import helmet from 'helmet';
import { demoRouter } from './demo/demo.routes';
import type { HubMetrics } from '../metrics/metrics';
import { apiDocsRouter, writeSpecFile } from './docs';
import { restCors } from './cors.middleware';
import { notFoundHandler, problemMiddleware } from './error.middleware';
import { RegisterRoutes } from './generated/routes';
import { createHttpServices, provideServices, type HttpServiceDeps } from './http.services';
import { jsonBody } from './json-body.middleware';
import { metricsAuth } from './metrics-auth.middleware';

export type { ReadinessProbe } from './http.services';

/** The service deps plus what only the app itself uses. */
export interface HttpDeps extends HttpServiceDeps {
  metrics: HubMetrics;
}

/**
 * Directory of the browser SDK bundles built by `npm run build`: `<root>/dist/sdk`, whether this
 * module runs from `dist/http` or from `src/http` (tests).
 */
export const SDK_DIR = join(__dirname, '..', '..', 'dist', 'sdk');

const SPEC_WRITTEN = 'relayHubSpecWritten';

/**
 * The Express app: SDK files, API docs, the tsoa REST routes (health included), metrics, then
 * problem+json errors. Writes the OpenAPI spec to OPENAPI_SPEC_FILE (see {@link specWritten}).
 * No listening here.
 */
export function createHttpApp(deps: HttpDeps): Express {
  const { config } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.TRUST_PROXY);
  app.use(helmet({ contentSecurityPolicy: false }));
  provideServices(app.locals, createHttpServices(deps));
  app.locals[SPEC_WRITTEN] = writeSpecFile(config.OPENAPI_SPEC_FILE, deps.logger);

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

  if (config.API_DOCS_ENABLED) app.use(apiDocsRouter());

  app.get('/metrics', metricsAuth(config.METRICS_TOKEN), async (_req, res) => {
    res.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });

  // Optional routers go here: after the SDK, docs and metrics, before the REST routes, so they
  // parse their own bodies and never see the REST 415 rule.
  if (config.DEMO_ENABLED) app.use(demoRouter({ jwt: deps.jwt }));

  const rest = Router();
  rest.use(restCors(config.CORS_ORIGINS), jsonBody(config.REST_BODY_LIMIT_BYTES));
  RegisterRoutes(rest);
  app.use(rest);

  app.use(notFoundHandler);
  app.use(problemMiddleware(deps.logger));
  return app;
}

/** Resolves once the app's start-up write of OPENAPI_SPEC_FILE finished (false when it failed). */
export function specWritten(app: Express): Promise<boolean> {
  return app.locals[SPEC_WRITTEN] as Promise<boolean>;
}
