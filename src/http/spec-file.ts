import { randomUUID } from 'node:crypto';
import { rename, unlink, writeFile } from 'node:fs/promises';
import type { Logger } from '../logging/logger';

/**
 * Writes `document` as JSON to `path` (for client generators and gateways). The file is replaced
 * atomically, so hubs starting side by side never leave a torn file. A failure is logged, never
 * thrown: the hub serves without it. `what` and `setting` name the document and its config key.
 */
export async function writeJsonFile(path: string, document: unknown, logger: Logger, what: string, setting: string): Promise<boolean> {
  const temp = `${path}.${randomUUID()}.tmp`;
  try {
    await writeFile(temp, `${JSON.stringify(document, null, 2)}\n`);
    await rename(temp, path);
    logger.debug({ path }, `${what} written`);
    return true;
  } catch (err) {
    await unlink(temp).catch(() => {});
    logger.warn({ err, path }, `could not write the ${what} file (${setting}); serving without it`);
    return false;
  }
}
