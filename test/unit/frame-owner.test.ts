import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

// Every JSON frame that crosses replicas over Redis is shaped in one module, src/cluster/frames.ts
// (docs/architecture.md, "Across replicas"); the Socket.IO adapter's own format stays fenced in
// src/internals/. A frame spelled anywhere else (a delivery request's `,"message":`, a stream event's
// `{"id":…,"seq":`, the adapter's envelope) fails here: it belongs in frames.ts.

const SRC = join(__dirname, '..', '..', 'src');
const OWNERS = ['cluster/frames.ts', 'internals/'];
/** Code the build generates (.gitignore): the REST client and tsoa's routes. */
const GENERATED = ['client/', 'http/generated/'];

/** What only the frames module writes: cross-replica JSON keys spelled by hand, the delivery frames' kinds, the frame builders. */
const FRAME =
  /"(seq|message|observed|index|part|packet|opts|nsp|uid)":|\bt: '(req|res)'|\bwithTrailingField\(|\broomBroadcastFramer\(|\bparseFrame\b/;

/** A line of a comment: doc comments may show a frame. */
const COMMENT = /^\s*(\*|\/\/|\/\*)/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

describe('one owner for cross-replica frames', () => {
  it('no file outside src/cluster/frames.ts and src/internals/ spells a cross-replica frame', () => {
    const offenders: string[] = [];
    for (const path of sources(SRC)) {
      const file = relative(SRC, path);
      if ([...OWNERS, ...GENERATED].some((skipped) => file.startsWith(skipped))) continue;
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (!COMMENT.test(line) && FRAME.test(line)) offenders.push(`src/${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });

  it('recognises a frame written by hand', () => {
    for (const line of [
      'const head = `{"id":${JSON.stringify(id)},"seq":`;',
      'const MESSAGE_FIELD = \',"message":\';',
      "const response = JSON.stringify({ t: 'res', id, result });",
      "const request = withTrailingField(envelope, 'message');",
    ]) {
      expect(FRAME.test(line)).toBe(true);
    }
    expect(FRAME.test(' * `{"id":…,"seq":` in a doc comment') && !COMMENT.test(' * `{"id":…,"seq":` in a doc comment')).toBe(false);
  });
});
