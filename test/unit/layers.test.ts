import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The layer rule of docs/architecture.md ("Layers"), checked over the real import graph
 * with dependency-cruiser and the rules in `.dependency-cruiser.cjs`.
 */
const root = join(__dirname, '..', '..');
const depcruise = join(root, 'node_modules', '.bin', 'depcruise');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

/** The trees the rules cover: src/ and the TypeScript SDKs that live beside it in sdk/. */
const TREES = ['src', 'sdk/browser/src', 'sdk/widget/src'];

function violations(cwd: string, config: string): Violation[] {
  const trees = TREES.filter((tree) => existsSync(join(cwd, tree)));
  const out = execFileSync(depcruise, [...trees, '--config', config, '--output-type', 'json'], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  return (JSON.parse(out) as { summary: { violations: Violation[] } }).summary.violations;
}

const describeViolation = (v: Violation) => `${v.rule.name}: ${v.from} → ${v.to}`;

describe('layers import downward only', () => {
  it('src/ and the SDKs have no import that breaks a layer rule', () => {
    expect(violations(root, '.dependency-cruiser.cjs').map(describeViolation)).toEqual([]);
  });

  describe('the rules catch what they must', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'relay-layers-'));
      cpSync(join(root, 'tsconfig.json'), join(dir, 'tsconfig.json'));
      symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
      const file = (path: string, text: string) => {
        mkdirSync(join(dir, path, '..'), { recursive: true });
        writeFileSync(join(dir, path), text);
      };
      // One file per layer breach the first release had, plus the SDK rule.
      file('src/http/client-ip.ts', 'export const clientIp = 1;\n');
      file('src/net/engine-gate.ts', "import { clientIp } from '../http/client-ip';\nexport const gate = clientIp;\n");
      file('src/relay/protocol.ts', "export const ADMIN_ROLE = 'ADMIN';\n");
      file('src/auth/identity.ts', "import { ADMIN_ROLE } from '../relay/protocol';\nexport const role = ADMIN_ROLE;\n");
      file('src/sdk/agent/index.ts', "import { gate } from '../../net/engine-gate';\nexport const sdk = gate;\n");
      file('src/protocol/index.ts', "export { role } from '../auth/identity';\n");
      // The limits once imported the store, which imports the limits: a cycle, even by type.
      file('src/store/store.ts', 'export interface Store {\n  n: number;\n}\n');
      file('src/limits/auth-failure-limiter.ts', "import type { Store } from '../store/store';\nexport type Limiter = Store;\n");
      // The agent SDK's package installs socket.io-client alone: any other package breaks it.
      // The browser SDK reaches only the protocol; the widget only the browser SDK's index.
      file('sdk/browser/src/index.ts', "import { gate } from '../../../src/net/engine-gate';\nexport const chat = gate;\n");
      file('sdk/browser/src/backoff.ts', 'export const backoff = 1;\n');
      file(
        'sdk/widget/src/index.ts',
        "import { chat } from '../../browser/src';\nimport { backoff } from '../../browser/src/backoff';\nexport const w = [chat, backoff];\n",
      );
      // The server reaches no browser code; the console's page script may draw with the widget.
      file('src/http/page.ts', "import { w } from '../../sdk/widget/src';\nexport const page = w;\n");
      file('src/console/client/view.ts', "import { w } from '../../../sdk/widget/src';\nexport const view = w;\n");
      file('sdk/widget/src/hub-peek.ts', "import { role } from '../../../src/auth/identity';\nexport const peek = role;\n");
      file(
        'src/sdk/agent/cache.ts',
        "import { LRUCache } from 'lru-cache';\nimport { io } from 'socket.io-client';\nexport const c = [LRUCache, io];\n",
      );
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('reports every upward import', () => {
      // A package is named by its folder: where node_modules resolves to differs between machines.
      const found = violations(dir, join(root, '.dependency-cruiser.cjs'))
        .map(describeViolation)
        .map((v) => v.replace(/→ .*node_modules\/([^/]+)\/.*$/, '→ npm:$1'))
        .sort();
      expect(found).toEqual([
        'layer-auth-store-net-limits: src/auth/identity.ts → src/relay/protocol.ts',
        'layer-auth-store-net-limits: src/net/engine-gate.ts → src/http/client-ip.ts',
        'layer-protocol: src/protocol/index.ts → src/auth/identity.ts',
        'limits-not-store: src/limits/auth-failure-limiter.ts → src/store/store.ts',
        'sdk-agent-socket-io-client-only: src/sdk/agent/cache.ts → npm:lru-cache',
        'sdk-browser-protocol-only: sdk/browser/src/index.ts → src/net/engine-gate.ts',
        'sdk-protocol-only: src/sdk/agent/index.ts → src/net/engine-gate.ts',
        'sdk-widget-browser-sdk-and-protocol-only: sdk/widget/src/hub-peek.ts → src/auth/identity.ts',
        'sdk-widget-browser-sdk-and-protocol-only: sdk/widget/src/index.ts → sdk/browser/src/backoff.ts',
        'server-no-browser-sdks: src/http/page.ts → sdk/widget/src/index.ts',
      ]);
    });
  });
});
