import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { ENGINE_IO_CHECKED } from '../../src/internals/engine-io.internals';
import { IOREDIS_CHECKED } from '../../src/internals/ioredis.internals';
import { NODE_REQUIRE_CHECKED } from '../../src/internals/node-require.internals';
import { REDIS_ADAPTER_CHECKED } from '../../src/internals/redis-adapter.internals';
import { SOCKET_IO_ADAPTER_CHECKED } from '../../src/internals/socket-io-adapter.internals';
import { SOCKET_IO_CHECKED } from '../../src/internals/socket-io.internals';
import { WS_CHECKED } from '../../src/internals/ws.internals';

// Private members and wire formats of libraries live in src/internals/, one module per library,
// each naming the versions it was checked against (its tests are in test/integration/internals/).
// An upgrade to a version nobody checked fails here until someone runs those tests and adds it.

const ROOT = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };

/** The version of `name` the hub loads (a transitive one: as socket.io resolves it). */
function installed(name: string): string {
  const from = createRequire(require.resolve('socket.io'));
  const entry = from.resolve(name);
  const dir = entry.slice(0, entry.lastIndexOf(`node_modules/${name}/`) + `node_modules/${name}/`.length);
  return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

const CHECKED = [WS_CHECKED, SOCKET_IO_CHECKED, SOCKET_IO_ADAPTER_CHECKED, ENGINE_IO_CHECKED, REDIS_ADAPTER_CHECKED, IOREDIS_CHECKED];

describe('library internals (src/internals/)', () => {
  it.each(CHECKED.map((c) => [c.package, c.versions] as const))(
    'the installed %s is a version its module was checked against',
    (name, versions) => {
      expect(versions).toContain(installed(name));
    },
  );

  it('runs on the Node major its require.cache use was checked against', () => {
    const major = (v: string) => v.replace(/^v/, '').split('.')[0];
    expect(NODE_REQUIRE_CHECKED.versions.map(major)).toContain(major(process.version));
  });

  it.each(['ws', 'socket.io', '@socket.io/redis-adapter', 'ioredis'])(
    '%s, whose internals the hub uses, is pinned to a patch range',
    (name) => {
      expect(pkg.dependencies[name]).toMatch(/^~\d+\.\d+\.\d+$/);
    },
  );

  it.each(['engine.io', 'socket.io-adapter'])('%s comes through socket.io on a patch range', (name) => {
    const socketIo = createRequire(require.resolve('socket.io'))('socket.io/package.json') as { dependencies: Record<string, string> };
    expect(socketIo.dependencies[name]).toMatch(/^~/);
  });

  it('no file outside src/internals/ names those private members', () => {
    const PRIVATE =
      /\b_sender\b|\b_nsps\b|\bregisterAckCallback\b|\b_packet\b|\bwriteToEngine\b|\bnotifyOutgoingListeners\b|\bdoPublish(Response)?\b|\bdynamicChannel\b|\bshouldUseASeparateNamespace\b|\.engine\b[^;\n]*\.clients\b|require\.cache|new Module\(|transport\.socket\b|\bsocket as WebSocket\b|\bisResetting\b|\bstartupNodes\b/;
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) {
          if (name !== 'internals' && name !== 'client') walk(path);
        } else if (path.endsWith('.ts')) {
          readFileSync(path, 'utf8')
            .split('\n')
            .forEach((line, i) => {
              if (PRIVATE.test(line)) offenders.push(`${relative(ROOT, path)}:${i + 1}: ${line.trim()}`);
            });
        }
      }
    };
    walk(join(ROOT, 'src'));
    expect(offenders).toEqual([]);
  });
});
