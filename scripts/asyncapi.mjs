// Writes the AsyncAPI document of the relay protocol (docs/protocol.md) from the compiled protocol
// registry: dist/asyncapi.json, with the server of the default configuration. The hub serves and
// writes this file with its own PUBLIC_URL filled in. Run by scripts/build.mjs after tsc.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { asyncApiDocument } = require(join(root, 'dist/protocol/asyncapi.document.js'));
const { configSchema } = require(join(root, 'dist/config/config.schema.js'));
const { publicUrl } = require(join(root, 'dist/config/public-url.js'));

const defaults = { PUBLIC_URL: configSchema.PUBLIC_URL.default, HOST: configSchema.HOST.default, PORT: configSchema.PORT.default };
const out = join(root, 'dist', 'asyncapi.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(asyncApiDocument(publicUrl(defaults)), null, 2)}\n`);
console.log(`AsyncAPI document written to ${out}`);
