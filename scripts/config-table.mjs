// Prints the configuration table of docs/configuration.md from the convict schema (run after
// `npm run build`). `npm run docs` writes it into the page, with the other generated tables.
import { configTable } from './docs-tables.mjs';

console.log(configTable());
