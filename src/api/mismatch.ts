import type { z } from 'zod';

/** One record of an answer's `data` list that does not have the spec's shape. */
export interface MalformedRecord {
  /** Its position in the page (0 first). */
  index: number;
  /** Its `id`, when it has a usable one. */
  id: number | string | undefined;
  /** What is wrong, one line per field: `amount: expected a decimal string with two decimals (got "1e+300.56")`. */
  problems: string[];
}

type Path = readonly PropertyKey[];

/** Fields whose values hold nothing personal, so a wrong one is quoted in the message; other values are only described. */
const QUOTABLE_MONEY = ['amount', 'price', 'subtotal', 'discount', 'total', 'fee', 'line_total', 'unit_price'];
const QUOTABLE_KINDS = ['status', 'type', 'content_type', 'direction', 'sender_type', 'role', 'outcome', 'source'];
const QUOTABLE_OTHERS = ['close_date', 'per_page', 'next_cursor', 'id', '\\w+_id', '\\w+_at'];
const QUOTABLE = new RegExp(`^(${[...QUOTABLE_MONEY, ...QUOTABLE_KINDS, ...QUOTABLE_OTHERS].join('|')})$`);

function valueAt(json: unknown, path: Path): unknown {
  let v: unknown = json;
  for (const key of path) v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[key] : undefined;
  return v;
}

function got(json: unknown, path: Path): string {
  const v = valueAt(json, path);
  if (v === undefined) return 'missing';
  const key = String(path[path.length - 1] ?? '');
  if (typeof v === 'string') return QUOTABLE.test(key) ? `got ${JSON.stringify(v.slice(0, 40))}` : `got a string of ${v.length} characters`;
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return `got ${String(v)}`;
  return `got ${Array.isArray(v) ? 'an array' : 'an object'}`;
}

const problem = (json: unknown, issue: z.core.$ZodIssue, from: number): string =>
  `${issue.path.slice(from).map(String).join('.') || '(record)'}: ${issue.message} (${got(json, issue.path)})`;

/** The records of a `{data: [...]}` answer that the issues are about, with what is wrong with each. */
export function malformedRecords(json: unknown, issues: readonly z.core.$ZodIssue[]): MalformedRecord[] {
  const byIndex = new Map<number, MalformedRecord>();
  for (const issue of issues) {
    const [top, index] = issue.path;
    if (top !== 'data' || typeof index !== 'number') continue;
    const id = valueAt(json, ['data', index, 'id']);
    const record = byIndex.get(index) ?? { index, id: typeof id === 'number' || typeof id === 'string' ? id : undefined, problems: [] };
    record.problems.push(problem(json, issue, 2));
    byIndex.set(index, record);
  }
  return [...byIndex.values()].sort((a, b) => a.index - b.index);
}

/**
 * Says where an answer departs from the spec: for a list, which records (by
 * position and id) and what is wrong with each; otherwise the fields.
 */
export function describeMismatch(json: unknown, issues: readonly z.core.$ZodIssue[], records: readonly MalformedRecord[]): string {
  const count = Array.isArray(valueAt(json, ['data'])) ? (valueAt(json, ['data']) as unknown[]).length : 0;
  const listed = records
    .slice(0, 3)
    .map((r) => `record ${r.index + 1} of ${count}${r.id !== undefined ? ` (id ${r.id})` : ''}: ${r.problems.slice(0, 3).join('; ')}`);
  const more = records.length > 3 ? [`and ${records.length - 3} more records`] : [];
  const rest = issues
    .filter((i) => !(i.path[0] === 'data' && typeof i.path[1] === 'number'))
    .slice(0, 3)
    .map((i) => problem(json, i, 0));
  return [...listed, ...more, ...rest].join('; ');
}
