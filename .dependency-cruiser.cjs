// Which part of src/ and of the SDKs in sdk/ may import which (docs/architecture.md, "Layers").
// Checked over the real import graph by test/unit/layers.test.ts; `npx depcruise src sdk/browser/src
// sdk/widget/src` prints the same verdicts.
//
// Layers, lowest first. A folder may import its own layer and the layers below it, never above.
// src/internals/ is outside the layers: any layer but the protocol may use it, and it uses none.
const LAYERS = [
  ['protocol'],
  ['config', 'logging', 'metrics'],
  ['auth', 'store', 'net', 'limits'],
  ['relay'],
  ['cluster'],
  ['http'],
  ['demo', 'console'],
  ['hub'],
];
/** Files at the top of src/: the process entry and the package entry. */
const ENTRIES = '^src/(main|index)[.]ts$';

const folder = (names) => `^src/(${names.join('|')})/`;

const layerRules = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${layer.join('-')}`,
  comment: `${layer.join(', ')} may import only ${LAYERS.slice(0, i + 1)
    .flat()
    .join(', ')}`,
  severity: 'error',
  from: { path: folder(layer) },
  to: { path: [folder(LAYERS.slice(i + 1).flat()), ENTRIES] },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'internals-standalone',
      comment: 'src/internals/ fences the private parts of libraries, one module per library: it imports nothing of the hub',
      severity: 'error',
      from: { path: '^src/internals/' },
      to: { path: '^src/', pathNot: '^src/internals/' },
    },
    {
      name: 'protocol-no-internals',
      comment: 'the protocol ships to browsers and bots: no server library internals',
      severity: 'error',
      from: { path: '^src/protocol/' },
      to: { path: '^src/internals/' },
    },
    {
      name: 'hub-not-entries',
      comment: 'the hub is imported by main and index, never the other way round',
      severity: 'error',
      from: { path: folder(['hub']) },
      to: { path: ENTRIES },
    },
    {
      name: 'sdk-protocol-only',
      comment: 'the SDKs ship to bots and browsers: they import the protocol and their own files only',
      severity: 'error',
      from: { path: '^src/sdk/([^/]+)/' },
      to: { path: '^src/', pathNot: ['^src/protocol/', '^src/sdk/$1/'] },
    },
    {
      name: 'sdk-browser-protocol-only',
      comment: 'the browser SDK (sdk/browser) ships to browsers: it imports the protocol and its own files only',
      severity: 'error',
      from: { path: '^sdk/browser/src/' },
      to: { path: '^(src|sdk)/', pathNot: ['^src/protocol/', '^sdk/browser/src/'] },
    },
    {
      name: 'sdk-widget-browser-sdk-and-protocol-only',
      comment: "the widget (sdk/widget) talks to the hub through the browser SDK's public API (its index) only, and may use the protocol",
      severity: 'error',
      // Its build scripts (.mjs) run in Node at build time and ship nothing.
      from: { path: '^sdk/widget/src/', pathNot: '[.]mjs$' },
      to: { path: '^(src|sdk)/', pathNot: ['^src/protocol/', '^sdk/browser/src/index[.]ts$', '^sdk/widget/src/'] },
    },
    {
      name: 'server-no-browser-sdks',
      comment:
        "the hub's server code runs in Node: only the scripts of its pages (src/demo/client, src/console/client, bundled for the browser) import the browser SDK and the widget, the console to draw its transcript with the widget's own renderer",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(demo|console)/client/' },
      to: { path: '^sdk/(browser|widget)/src/' },
    },
    {
      name: 'sdk-agent-socket-io-client-only',
      comment:
        'the agent SDK package (sdk/agent) installs socket.io-client and nothing else: no other package at run time (docs/agent-sdk.md)',
      severity: 'error',
      from: { path: '^src/sdk/agent/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        dependencyTypesNot: ['type-only'],
        pathNot: '(^|/)node_modules/socket[.]io-client/',
      },
    },
    {
      name: 'generated-client-standalone',
      comment: 'the generated REST client imports nothing of the server',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: '^src/client/' },
    },
    {
      name: 'limits-not-store',
      comment:
        'the store uses the limits (budgets its scripts spend), never the other way: limits take what they store as an interface of their own (limits and store once imported each other); type-only imports count too',
      severity: 'error',
      from: { path: '^src/limits/' },
      to: { path: '^src/store/' },
    },
    {
      name: 'no-transport-below-relay',
      comment: 'protocol, config, logging, metrics, auth, store and limits know no transport',
      severity: 'error',
      from: { path: folder(['protocol', 'config', 'logging', 'metrics', 'auth', 'store', 'limits']) },
      to: { path: '(^|/)node_modules/(express|socket[.]io|socket[.]io-client|engine[.]io|@tsoa|swagger-ui-express)/' },
    },
    {
      name: 'protocol-no-dependencies',
      comment:
        'the protocol is browser-safe; only its schemas, the part checks, the registry and the AsyncAPI generator use TypeBox (server side); a type-only import is erased',
      severity: 'error',
      from: {
        path: '^src/protocol/',
        pathNot: [
          '^src/protocol/schemas[.]ts$',
          '^src/protocol/[a-z-]+[.]schema[.]ts$',
          '^src/protocol/protocol[.]registry[.]ts$',
          '^src/protocol/asyncapi[.]document[.]ts$',
          '^src/protocol/part-checks[.]ts$',
        ],
      },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'no-circular',
      comment: 'no import cycles at run time (cycles through type-only imports vanish when compiled)',
      severity: 'error',
      from: { pathNot: '^src/client/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/http/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['cjs', 'es6'],
  },
};
