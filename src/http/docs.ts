import { Router } from 'express';
import swaggerUi from 'swagger-ui-express';
import type { Logger } from '../logging/logger';
import generatedSpec from './generated/openapi.json';
import { withProblemExamples } from './problem-examples';
import { writeJsonFile } from './spec-file';

/**
 * The OpenAPI document tsoa generated at build time (`info.version` `1.0`, never edited by hand),
 * with an example of its own code on every error response. What /api, /api-json and
 * OPENAPI_SPEC_FILE serve.
 */
export const openApiSpec: Readonly<Record<string, unknown>> = withProblemExamples(generatedSpec);

/**
 * Interactive docs at `/api` (Swagger UI, authorization kept across reloads) and the raw spec at
 * `/api-json`.
 */
export function apiDocsRouter(): Router {
  const router = Router();
  router.get('/api-json', (_req, res) => {
    res.json(openApiSpec);
  });
  // serveFiles renders swagger-ui-init.js from its own options, so both get the same ones.
  const options: swaggerUi.SwaggerUiOptions = {
    customSiteTitle: 'relay-hub REST API',
    swaggerOptions: { persistAuthorization: true },
  };
  router.use('/api', swaggerUi.serveFiles(openApiSpec, options), swaggerUi.setup(openApiSpec, options));
  return router;
}

/** Writes the spec to OPENAPI_SPEC_FILE: atomically, and a failure is logged, never thrown. */
export function writeSpecFile(path: string, logger: Logger): Promise<boolean> {
  return writeJsonFile(path, openApiSpec, logger, 'OpenAPI spec', 'OPENAPI_SPEC_FILE');
}
