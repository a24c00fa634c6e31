// The generated REST client (src/client, @hey-api/client-fetch) names fetch's DOM types such as
// `BodyInit`, which @types/node does not declare under `lib: ES2023`. The DOM lib declares them
// (and coexists with @types/node, as tsconfig.test.json already shows).
/// <reference lib="dom" />
