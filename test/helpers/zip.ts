// Reads one entry of a zip archive with nothing but node:zlib: the archive's central directory names
// each entry's compression method, sizes, CRC-32 and where its local header starts. Stored (0) and
// deflated (8) entries are supported, which is what every zip tool writes by default; ZIP64 archives
// (entries or offsets past 4 GiB) are refused rather than misread.
import { readFileSync } from 'node:fs';
import { crc32, inflateRawSync } from 'node:zlib';

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_FILE_HEADER = 0x04034b50;
/** The end record is 22 bytes plus a comment of at most 65,535. */
const END_RECORD_SEARCH = 22 + 0xffff;

interface CentralEntry {
  name: string;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  localHeaderOffset: number;
}

function endRecordOffset(zip: Buffer): number {
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - END_RECORD_SEARCH); at--) {
    if (zip.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY) return at;
  }
  throw new Error('not a zip archive: no end of central directory record');
}

/** The entries the central directory lists, in order. */
export function zipEntries(zip: Buffer): CentralEntry[] {
  const end = endRecordOffset(zip);
  const count = zip.readUInt16LE(end + 10);
  let at = zip.readUInt32LE(end + 16);
  if (count === 0xffff || at === 0xffffffff) throw new Error('ZIP64 archives are not supported');
  const entries: CentralEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== CENTRAL_DIRECTORY_ENTRY) throw new Error(`corrupt central directory at byte ${at}`);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const entry: CentralEntry = {
      method: zip.readUInt16LE(at + 10),
      crc: zip.readUInt32LE(at + 16),
      compressedSize: zip.readUInt32LE(at + 20),
      size: zip.readUInt32LE(at + 24),
      localHeaderOffset: zip.readUInt32LE(at + 42),
      name: zip.toString('utf8', at + 46, at + 46 + nameLength),
    };
    if ([entry.compressedSize, entry.size, entry.localHeaderOffset].includes(0xffffffff)) {
      throw new Error(`${entry.name}: ZIP64 entries are not supported`);
    }
    entries.push(entry);
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/**
 * The bytes of `name` in the zip archive at `zipPath`, checked against the CRC-32 the archive
 * records for it.
 */
export function readZipEntry(zipPath: string, name: string): Buffer {
  const zip = readFileSync(zipPath);
  const entry = zipEntries(zip).find((e) => e.name === name);
  if (!entry) throw new Error(`${zipPath} has no entry ${name}`);
  const at = entry.localHeaderOffset;
  if (zip.readUInt32LE(at) !== LOCAL_FILE_HEADER) throw new Error(`${name}: corrupt local header`);
  // The local header's own name and extra lengths may differ from the central directory's.
  const start = at + 30 + zip.readUInt16LE(at + 26) + zip.readUInt16LE(at + 28);
  const raw = zip.subarray(start, start + entry.compressedSize);
  let data: Buffer;
  if (entry.method === 0) data = Buffer.from(raw);
  else if (entry.method === 8) data = inflateRawSync(raw);
  else throw new Error(`${name}: compression method ${entry.method} is not supported (only stored and deflated)`);
  if (data.length !== entry.size) throw new Error(`${name}: ${data.length} bytes inflated, the archive says ${entry.size}`);
  if (crc32(data) !== entry.crc) throw new Error(`${name}: CRC-32 mismatch, the archive is damaged`);
  return data;
}
