import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { luaSource } from '../../src/store/redis/lua-script';

const REDIS = join(__dirname, '..', '..', 'src', 'store', 'redis');
const LUA = join(REDIS, 'lua');

function luaFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? luaFiles(join(dir, e.name)) : e.name.endsWith('.lua') ? [join(dir, e.name)] : [],
  );
}

// The Redis scripts are .lua files (docs/architecture.md, "Lua scripts"): each names its keys,
// arguments and results in its header; shared functions come in by `--#include`.
describe('Lua scripts', () => {
  const scripts = luaFiles(LUA).filter((f) => !f.includes(`${join('lua', 'lib')}`));

  it('every script loads with its includes and constants filled in, and says what it takes and returns', () => {
    expect(scripts.length).toBeGreaterThan(20);
    for (const file of scripts) {
      const name = relative(LUA, file).replace(/\.lua$/, '');
      const source = luaSource(name);
      expect({ name, left: /--#include|\{\{\w+\}\}/.exec(source)?.[0] }).toEqual({ name, left: undefined });
      expect({ name, header: readFileSync(file, 'utf8').startsWith('--') }).toEqual({ name, header: true });
    }
  });

  it('an unknown include or constant fails at load, naming the file', () => {
    expect(() => luaSource('lib/none')).toThrow(/none\.lua/);
  });

  it('no TypeScript in the store holds Lua: every script is a luaScript(name)', () => {
    for (const name of readdirSync(REDIS).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(REDIS, name), 'utf8');
      expect({ name, inline: /new LuaScript\(`|(^|[\s(=])redis\.call\(/m.test(text) }).toEqual({ name, inline: false });
    }
  });
});
