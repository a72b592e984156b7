/**
 * A sleep or wait a run reached, as its record keeps it (`t:<name>` in
 * `run:<scope>`, src/queue/waits/runs.ts): its kind and due time, for a wait
 * also the lookback's start, the event, the match key and the WaitStore id.
 *
 * Stored compact so that a run's record stays a small listpack-encoded hash
 * (Redis keeps a hash whose values are all ≤ 64 bytes as one flat listpack;
 * one longer value makes it a hash table, ≈ 250 B more per run):
 *
 *   s|<due>                      a sleep
 *   w|<due>|<since>|<event>|<key> a wait (times in base 36; the key last: it may hold `|`)
 *
 * The WaitStore id is left out when it is the default (`<scope>:w:<name>`).
 * A wait matched by a function (`own`, `n`) or an event name with `|` is kept
 * as JSON, and so were all records before this format: both are read.
 */
export interface Reached {
  k: 'sleep' | 'wait';
  due: number;
  since?: number;
  id?: string;
  ev?: string;
  key?: string;
  own?: string;
  n?: number;
}

/** The WaitStore id of a run's wait `name` unless its record says otherwise. */
export const defaultWaitId = (scope: string, name: string): string => `${scope}:w:${name}`;

/**
 * Every WaitStore id a run registered, from its record's fields (`t:<name>`): a wait's id, and for a wait
 * matched by a function or a keyed `where` one more per candidate passed over (`<id>:<n>`).
 */
export function waitIdsOf(scope: string, fields: ReadonlyMap<string, string>): string[] {
  const ids: string[] = [];
  for (const [f, v] of fields) {
    if (!f.startsWith('t:')) continue;
    const r = decodeReached(v, scope, f.slice(2));
    if (r.id) for (let n = 0; n <= (r.n ?? 0); n++) ids.push(n === 0 ? r.id : `${r.id}:${n}`);
  }
  return ids;
}

const b36 = (n: number) => Math.round(n).toString(36);

export function encodeReached(r: Reached, scope: string, name: string): string {
  const { id, ...rest } = r;
  const custom = id !== undefined && id !== defaultWaitId(scope, name);
  if (!custom && r.own === undefined && r.n === undefined) {
    if (r.k === 'sleep' && r.since === undefined && r.ev === undefined && r.key === undefined) return `s|${b36(r.due)}`;
    if (r.k === 'wait' && r.since !== undefined && r.ev !== undefined && r.key !== undefined && !r.ev.includes('|')) {
      return `w|${b36(r.due)}|${b36(r.since)}|${r.ev}|${r.key}`;
    }
  }
  return JSON.stringify(custom ? r : rest);
}

export function decodeReached(raw: string, scope: string, name: string): Reached {
  if (raw.startsWith('{')) {
    const r = JSON.parse(raw) as Reached;
    return r.k === 'wait' && r.id === undefined ? { ...r, id: defaultWaitId(scope, name) } : r;
  }
  const [k, due, since, ev] = raw.split('|', 4);
  if (k === 's') return { k: 'sleep', due: parseInt(due as string, 36) };
  const head = `${k}|${due}|${since}|${ev}|`;
  return {
    k: 'wait',
    due: parseInt(due as string, 36),
    since: parseInt(since as string, 36),
    id: defaultWaitId(scope, name),
    ev: ev,
    key: raw.slice(head.length),
  };
}
