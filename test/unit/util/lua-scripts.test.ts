import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LIMITER_SCRIPTS } from '../../../src/api/rate-limiter-lua.js';
import { HISTORY_SCRIPTS } from '../../../src/history/scripts.js';
import { QUEUE_SCRIPTS } from '../../../src/queue/scripts.js';
import { STATE_SCRIPTS } from '../../../src/queue/state/state-store.js';
import { WAIT_SCRIPTS } from '../../../src/queue/waits/wait-store.js';
import { RERUN_SCRIPTS } from '../../../src/rerun/scripts.js';
import { LUA_FILE_NAME, LuaScriptError, LuaScripts, parseLuaFileName } from '../../../src/util/lua.js';

const SRC = fileURLToPath(new URL('../../../src', import.meta.url));
const REGISTERED = [
  ...LIMITER_SCRIPTS.scripts.values(),
  ...QUEUE_SCRIPTS.scripts.values(),
  ...HISTORY_SCRIPTS.scripts.values(),
  ...WAIT_SCRIPTS.scripts.values(),
  ...STATE_SCRIPTS.scripts.values(),
  ...RERUN_SCRIPTS.scripts.values(),
];

describe('Lua script files', () => {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.lua'))
    .map((f) => join(SRC, f));

  it('are found', () => {
    expect(files.length).toBeGreaterThanOrEqual(8);
  });

  it.each(files.map((f) => [f.slice(SRC.length + 1), f]))(
    '%s is named <name>-<numKeys>.lua and registered with that name and key count',
    (_, file) => {
      expect(basename(file)).toMatch(LUA_FILE_NAME);
      const script = REGISTERED.find((s) => s.file === file);
      expect(script, `${file} is not registered by any LuaScripts`).toBeDefined();
      expect({ name: script?.name, numberOfKeys: script?.numberOfKeys }).toEqual(parseLuaFileName(basename(file)));
    },
  );

  it('every registered script is one of these files, and no two share a name', () => {
    expect(REGISTERED.map((s) => s.file).sort()).toEqual([...files].sort());
    expect(new Set(REGISTERED.map((s) => s.name)).size).toBe(REGISTERED.length);
  });
});

describe('parseLuaFileName', () => {
  it('reads the name and the number of keys, or n for a varying number', () => {
    expect(parseLuaFileName('rateAcquire-4.lua')).toEqual({ name: 'rateAcquire', numberOfKeys: 4 });
    expect(parseLuaFileName('ingestBatch-n.lua')).toEqual({ name: 'ingestBatch', numberOfKeys: null });
    for (const bad of ['rateAcquire.lua', 'rateAcquire-x.lua', 'rate-acquire-4.lua', 'RateAcquire-4.lua', 'rateAcquire-4.txt']) {
      expect(parseLuaFileName(bad), bad).toBeNull();
    }
  });
});

describe('LuaScripts refuses a folder that does not match its declaration', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const folder = (files: Record<string, string>) => {
    dir = mkdtempSync(join(tmpdir(), 'sy-lua-unit-'));
    for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
    return pathToFileURL(`${dir}/`);
  };

  it('reads each declared script once, with the name and key count of its file', () => {
    const set = new LuaScripts(folder({ 'unitOne-2.lua': 'return 1\n', 'unitVar-n.lua': 'return 2\n', 'notes.txt': 'ignored' }), [
      'unitOne',
      'unitVar',
    ]);
    expect([...set.scripts.values()].map(({ name, numberOfKeys, lua }) => ({ name, numberOfKeys, lua }))).toEqual([
      { name: 'unitOne', numberOfKeys: 2, lua: 'return 1\n' },
      { name: 'unitVar', numberOfKeys: null, lua: 'return 2\n' },
    ]);
  });

  it('a misnamed file', () => {
    expect(() => new LuaScripts(folder({ 'unitBad.lua': 'return 1' }), ['unitBad'])).toThrow(LuaScriptError);
    expect(() => new LuaScripts(folder({ 'unitBad.lua': 'return 1' }), ['unitBad'])).toThrow(
      /unitBad\.lua is not named <name>-<numKeys>\.lua/,
    );
  });

  it('a file no one registered', () => {
    expect(() => new LuaScripts(folder({ 'unitA-1.lua': 'return 1', 'unitStray-1.lua': 'return 1' }), ['unitA'])).toThrow(
      /unitStray-1\.lua is not registered; expected one of unitA/,
    );
  });

  it('a registered script without its file (say, a build that did not copy it)', () => {
    expect(() => new LuaScripts(folder({ 'unitHere-1.lua': 'return 1' }), ['unitHere', 'unitGone'])).toThrow(/no file for script unitGone/);
    expect(() => new LuaScripts(new URL('file:///nonexistent-switchyard-lua/'), ['unitHere'])).toThrow(
      /cannot read the Lua scripts in \/nonexistent-switchyard-lua/,
    );
  });

  it('a name already used by another folder (one client may carry every script)', () => {
    expect(() => new LuaScripts(folder({ 'rateAcquire-4.lua': 'return 1' }), ['rateAcquire'])).toThrow(
      /script name rateAcquire is used twice/,
    );
  });
});
