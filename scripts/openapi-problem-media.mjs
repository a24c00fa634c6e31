// Build step after `tsoa spec-and-routes`: every error response (status 400 and up) whose body is a
// `ProblemDto` is documented as `application/problem+json`. tsoa 6.6 keeps the media type of a
// method's `@Response` but writes a controller's class-level `@Response` (the 401, 403 and 429 every
// operation of a controller shares) as `application/json`; the hub sends problem+json for every
// error (docs/rest.md). test/integration/contract/openapi.contract.test.ts holds the generated spec to
// it. `node scripts/openapi-problem-media.mjs [spec.json]` rewrites the file in place.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const PROBLEM_SCHEMA = '#/components/schemas/ProblemDto';

/** The spec with problem bodies of error responses as problem+json; returns how many it moved. */
export function problemMedia(spec) {
  let moved = 0;
  for (const item of Object.values(spec.paths ?? {})) {
    for (const op of Object.values(item)) {
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        const content = response.content;
        const json = content?.['application/json'];
        if (!content || Number(status) < 400 || json?.schema?.$ref !== PROBLEM_SCHEMA) continue;
        delete content['application/json'];
        content['application/problem+json'] ??= json;
        moved++;
      }
    }
  }
  return moved;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2] ?? 'src/http/generated/openapi.json';
  const spec = JSON.parse(readFileSync(file, 'utf8'));
  const moved = problemMedia(spec);
  writeFileSync(file, `${JSON.stringify(spec, null, 2)}\n`);
  console.log(`${file}: ${moved} class-level error responses documented as application/problem+json`);
}
