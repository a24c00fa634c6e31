// Prints the configuration table for README.md from the convict schema (run after `npm run build`).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { configSchema } = require('../dist/config/config.schema.js');

const show = (value) => {
  if (value === null) return '—';
  if (Array.isArray(value)) return `\`${value.join(',')}\``;
  return `\`${String(value)}\``;
};
const rows = Object.entries(configSchema).map(([key, entry]) => {
  const def = entry.sensitive && entry.default === null ? 'secret, no default' : show(entry.default);
  return `| \`${key}\` | ${def} | ${entry.doc.replace(/\|/g, '\\|')} |`;
});
console.log(['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n'));
