import { randomUUID } from 'node:crypto';
import { rename, stat, unlink, writeFile } from 'node:fs/promises';
import type { Logger } from '../logging/logger';

/**
 * Writes `document` as JSON to `path` (for client generators and gateways). A regular file is
 * replaced atomically, so hubs starting side by side never leave a torn file; anything else that
 * exists there (`/dev/null`, a pipe) is written into, since renaming over it would replace the
 * device itself. A failure is logged, never thrown: the hub serves without it. `what` and
 * `setting` name the document and its config key.
 */
export async function writeJsonFile(path: string, document: unknown, logger: Logger, what: string, setting: string): Promise<boolean> {
  const json = `${JSON.stringify(document, null, 2)}\n`;
  const temp = `${path}.${randomUUID()}.tmp`;
  try {
    const existing = await stat(path).catch(() => null);
    if (existing && !existing.isFile()) {
      await writeFile(path, json);
    } else {
      await writeFile(temp, json);
      await rename(temp, path);
    }
    logger.debug({ path }, `${what} written`);
    return true;
  } catch (err) {
    await unlink(temp).catch(() => {});
    logger.warn({ err, path }, `could not write the ${what} file (${setting}); serving without it`);
    return false;
  }
}
