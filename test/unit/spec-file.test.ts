import { lstatSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeJsonFile } from '../../src/http/spec-file';
import { createLogger } from '../../src/logging/logger';

const logger = createLogger('silent');
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'spec-file-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('writeJsonFile', () => {
  it('replaces a regular file with the document', async () => {
    const path = join(dir, 'openapi.json');
    writeFileSync(path, 'old');
    expect(await writeJsonFile(path, { a: 1 }, logger, 'OpenAPI spec', 'OPENAPI_SPEC_FILE')).toBe(true);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ a: 1 });
  });

  it('writes into a device instead of renaming a file over it (OPENAPI_SPEC_FILE=/dev/null)', async () => {
    // Through a link, so that the old behaviour (rename over the path) replaces the link, not /dev/null.
    const link = join(dir, 'discard');
    symlinkSync('/dev/null', link);
    expect(await writeJsonFile(link, { a: 1 }, logger, 'OpenAPI spec', 'OPENAPI_SPEC_FILE')).toBe(true);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(await writeJsonFile('/dev/null', { a: 1 }, logger, 'OpenAPI spec', 'OPENAPI_SPEC_FILE')).toBe(true);
    expect(statSync('/dev/null').isCharacterDevice()).toBe(true);
  });
});
