import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Cluster, Redis } from 'ioredis';

/**
 * The one way Switchyard runs Lua in Redis. Each script is a file
 * `<name>-<numKeys>.lua` (BullMQ's convention) in a `lua/` folder beside the
 * code that uses it; `numKeys` is `n` when the number of keys varies (the
 * caller's keys are counted and the count sent first, as with EVAL). A folder
 * is read once, when its module is imported, and its scripts are registered on
 * a client with ioredis `defineCommand`: EVAL the first time on each
 * connection, EVALSHA after that, EVAL again after a NOSCRIPT (a restarted or
 * flushed server), on single-node, Sentinel and Cluster clients alike.
 */

type Client = Redis | Cluster;
export type LuaArg = string | number | Buffer;

/** `<name>-<numKeys>.lua`: a camelCase name (it becomes a method of the client) and a key count or `n`. */
export const LUA_FILE_NAME = /^([a-z][A-Za-z0-9]*)-(\d+|n)\.lua$/;

export interface LuaScript {
  readonly name: string;
  /** null: the number of keys varies per call. */
  readonly numberOfKeys: number | null;
  readonly lua: string;
  readonly file: string;
}

/** A script folder that does not match its declaration: a packaging or programming error. */
export class LuaScriptError extends Error {
  readonly code = 'lua_script';
  constructor(message: string) {
    super(message);
    this.name = 'LuaScriptError';
  }
}

/** Name and number of keys from a file name, or null when it is not `<name>-<numKeys>.lua`. */
export function parseLuaFileName(file: string): { name: string; numberOfKeys: number | null } | null {
  const m = LUA_FILE_NAME.exec(file);
  if (!m) return null;
  return { name: m[1] as string, numberOfKeys: m[2] === 'n' ? null : Number(m[2]) };
}

/** Runs a script: its keys (checked against the file's count) and its other arguments. */
export type LuaCall = (keys: readonly string[], args?: readonly LuaArg[]) => Promise<unknown>;

/** Every command name in use, across folders: one client may carry the scripts of all of them. */
const taken = new Map<string, string>();
/** The command names already defined on each client. */
const defined = new WeakMap<Client, Set<string>>();

/**
 * The scripts of one folder. `names` declares them (for the types); every
 * `.lua` file in the folder must be one of them and every name must have its
 * file, else the constructor throws, so a stray, misnamed or missing script
 * fails at import instead of at its first call.
 */
export class LuaScripts<N extends string> {
  readonly dir: string;
  readonly scripts: ReadonlyMap<N, LuaScript>;

  constructor(dir: URL, names: readonly N[]) {
    this.dir = resolve(fileURLToPath(dir));
    const declared = new Set<string>(names);
    const found = new Map<N, LuaScript>();
    let files: string[];
    try {
      files = readdirSync(dir)
        .filter((f) => f.endsWith('.lua'))
        .sort();
    } catch (err) {
      throw new LuaScriptError(`cannot read the Lua scripts in ${this.dir}: ${err instanceof Error ? err.message : String(err)}`);
    }
    for (const file of files) {
      const parsed = parseLuaFileName(file);
      if (!parsed)
        throw new LuaScriptError(`${this.dir}: ${file} is not named <name>-<numKeys>.lua (numKeys a number, or n when it varies)`);
      if (!declared.has(parsed.name))
        throw new LuaScriptError(`${this.dir}: ${file} is not registered; expected one of ${names.join(', ')}`);
      const path = join(this.dir, file);
      if (found.has(parsed.name as N))
        throw new LuaScriptError(`${this.dir}: two files for script ${parsed.name} (${found.get(parsed.name as N)?.file} and ${path})`);
      const owner = taken.get(parsed.name);
      if (owner !== undefined && owner !== path) throw new LuaScriptError(`script name ${parsed.name} is used twice: ${owner} and ${path}`);
      found.set(parsed.name as N, { ...parsed, lua: readFileSync(path, 'utf8'), file: path });
    }
    const missing = names.filter((n) => !found.has(n));
    if (missing.length > 0)
      throw new LuaScriptError(`${this.dir}: no file for script ${missing.join(', ')} (expected <name>-<numKeys>.lua)`);
    for (const s of found.values()) taken.set(s.name, s.file);
    this.scripts = found;
  }

  /** Defines the scripts on `redis` (once per client) and returns a call per script. */
  on(redis: Client): Record<N, LuaCall> {
    let names = defined.get(redis);
    if (!names) defined.set(redis, (names = new Set()));
    const calls = {} as Record<N, LuaCall>;
    const added: string[] = [];
    for (const [name, s] of this.scripts) {
      if (!names.has(name)) {
        if (name in redis) throw new LuaScriptError(`cannot define Lua script ${name}: the Redis client already has a member of that name`);
        redis.defineCommand(name, s.numberOfKeys === null ? { lua: s.lua } : { lua: s.lua, numberOfKeys: s.numberOfKeys });
        names.add(name);
        added.push(name);
      }
      const command = (redis as unknown as Record<string, (...args: LuaArg[]) => Promise<unknown>>)[name] as (
        ...args: LuaArg[]
      ) => Promise<unknown>;
      calls[name] = (keys, args = []) => {
        if (s.numberOfKeys === null) return command.call(redis, keys.length, ...keys, ...args);
        if (keys.length !== s.numberOfKeys) {
          return Promise.reject(new LuaScriptError(`Lua script ${name} takes ${s.numberOfKeys} keys, was given ${keys.length}`));
        }
        return command.call(redis, ...keys, ...args);
      };
    }
    if (added.length > 0) givePendingAutoPipelines(redis, added);
    return calls;
  }

  /**
   * Queues a call of `name` on a pipeline (its answer comes with the pipeline's). The pipeline must be
   * made after `on()` defined the scripts on its client: ioredis gives a pipeline its client's commands.
   */
  queue(pipeline: object, name: N, keys: readonly string[], args: readonly LuaArg[] = []): void {
    const s = this.scripts.get(name) as LuaScript;
    const command = (pipeline as Record<string, unknown>)[name];
    if (typeof command !== 'function')
      throw new LuaScriptError(`Lua script ${name} is not defined on this pipeline's client: call on() with the client first`);
    if (s.numberOfKeys !== null && keys.length !== s.numberOfKeys)
      throw new LuaScriptError(`Lua script ${name} takes ${s.numberOfKeys} keys, was given ${keys.length}`);
    const call = command as (...a: LuaArg[]) => unknown;
    if (s.numberOfKeys === null) call.call(pipeline, keys.length, ...keys, ...args);
    else call.call(pipeline, ...keys, ...args);
  }
}

/**
 * ioredis gives a pipeline its client's commands when the pipeline is made. An auto-pipeline (enableAutoPipelining)
 * made before `defineCommand`, and not sent yet, lacks the new script: a call of it queued there keeps its callback
 * but no command, so the pipeline answers one result short and ioredis throws an uncaught TypeError ("results[i] is
 * not iterable", redis/ioredis#1931). The scripts just defined are given to those pipelines as their constructor
 * gives them (the method, its Buffer form, the script by its SHA for a NOSCRIPT retry).
 */
function givePendingAutoPipelines(redis: Client, added: readonly string[]): void {
  const client = redis as unknown as {
    _autoPipelines?: Map<string, Record<string, unknown>>;
    scriptsSet?: Record<string, { sha: string }>;
  } & Record<string, unknown>;
  for (const pipeline of client._autoPipelines?.values() ?? []) {
    const bySha = pipeline['_shaToScript'] as Record<string, unknown> | undefined;
    for (const name of added) {
      pipeline[name] = client[name];
      pipeline[`${name}Buffer`] = client[`${name}Buffer`];
      const script = client.scriptsSet?.[name];
      if (script && bySha) bySha[script.sha] = script;
    }
  }
}
