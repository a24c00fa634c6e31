import { randomUUID } from 'node:crypto';
import { rename, unlink, writeFile } from 'node:fs/promises';
import { Router } from 'express';
import swaggerUi from 'swagger-ui-express';
import type { Logger } from '../logging/logger';
import generatedSpec from './generated/openapi.json';

/** The OpenAPI document tsoa generated at build time (`info.version` `1.0`). Never edited by hand. */
export const openApiSpec: Readonly<Record<string, unknown>> = generatedSpec;

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

/**
 * Writes the spec to `path` (for client generators and gateways). The file is replaced atomically,
 * so hubs starting side by side never leave a torn file. A failure is logged, never thrown: the
 * hub serves without it.
 */
export async function writeSpecFile(path: string, logger: Logger): Promise<boolean> {
  const temp = `${path}.${randomUUID()}.tmp`;
  try {
    await writeFile(temp, `${JSON.stringify(openApiSpec, null, 2)}\n`);
    await rename(temp, path);
    logger.debug({ path }, 'OpenAPI spec written');
    return true;
  } catch (err) {
    await unlink(temp).catch(() => {});
    logger.warn({ err, path }, 'could not write the OpenAPI spec file (OPENAPI_SPEC_FILE); serving without it');
    return false;
  }
}
