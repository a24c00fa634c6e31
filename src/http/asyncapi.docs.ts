import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Router } from 'express';
import type { Logger } from '../logging/logger';
import { withServers } from '../protocol/asyncapi.servers';
import { asyncApiPage } from './asyncapi.page';
import { writeJsonFile } from './spec-file';

/**
 * The AsyncAPI document `npm run build` generates from the protocol registry (scripts/asyncapi.mjs):
 * `<root>/dist/asyncapi.json`, whether this module runs from `dist/http` or from `src/http` (tests).
 */
export const ASYNCAPI_BUILD_FILE = join(__dirname, '..', '..', 'dist', 'asyncapi.json');

/**
 * The build-time document with its server set to `publicUrl` (the hub's PUBLIC_URL, or the one
 * derived from HOST and PORT). Read once per hub; a missing file means the build did not run.
 */
export function loadAsyncApiDocument(publicUrl: string, file: string = ASYNCAPI_BUILD_FILE): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`the AsyncAPI document ${file} is missing: run \`npm run build\` (${(err as Error).message})`);
  }
  return withServers(JSON.parse(text) as Record<string, unknown>, publicUrl);
}

/** The relay protocol's description: the raw document at `/asyncapi.json`, for people at `/asyncapi`. */
export function asyncApiRouter(document: Record<string, unknown>): Router {
  const page = asyncApiPage(document);
  const router = Router();
  router.get('/asyncapi.json', (_req, res) => {
    res.json(document);
  });
  router.get('/asyncapi', (req, res) => {
    // The page links relative to itself (it works under a proxy's path prefix): no trailing slash.
    if (req.path.endsWith('/')) return res.redirect(301, '../asyncapi');
    res.type('html').send(page);
  });
  return router;
}

/** Writes the document to ASYNCAPI_SPEC_FILE: atomically, and a failure is logged, never thrown. */
export function writeAsyncApiFile(path: string, document: Record<string, unknown>, logger: Logger): Promise<boolean> {
  return writeJsonFile(path, document, logger, 'AsyncAPI document', 'ASYNCAPI_SPEC_FILE');
}
