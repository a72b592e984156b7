import { EVENT_NAMES, parseWhere, parseWheres, suggestEventName, WhereError, type EventName, type WhereQuery } from '../events/index.js';
import { DELIVERY_OUTCOMES, type DeliveryFilter } from '../history/index.js';
import { readSince } from '../util/index.js';
import { escapeHtml } from './page.js';
import { whereTerms } from './where-box.js';

/** The search fields of the deliveries page, as the CLI's filters; `where` is the query box. */
export const FIELDS = ['event', 'handler', 'outcome', 'conversation', 'contact', 'since', 'where'] as const;
export type Field = (typeof FIELDS)[number];
export type Values = Partial<Record<Field, string>>;
type Filter = { -readonly [K in keyof DeliveryFilter]: DeliveryFilter[K] };

/** A selection of deliveries read from a form or a query: what was typed, the filter, the query box's terms, problems in words. */
export interface Selection {
  readonly values: Values;
  readonly filter: Filter;
  readonly where: readonly string[];
  readonly problems: readonly string[];
}

/** The selection in the parameters `get` gives (a query or a posted form), read as strictly as the CLI reads its flags. */
export function readSelection(get: (name: string) => string | undefined): Selection {
  const values: Values = {};
  for (const f of FIELDS) {
    const v = get(f)?.trim();
    if (v) values[f] = v;
  }
  const problems: string[] = [];
  const filter: Filter = {};
  if (values.event) {
    const problem = eventProblem(values.event);
    if (problem) problems.push(problem);
    else filter.event = values.event;
  }
  if (values.handler) filter.handler = values.handler;
  if (values.outcome) {
    if (DELIVERY_OUTCOMES.includes(values.outcome)) filter.outcome = values.outcome;
    else problems.push(`outcome: expected one of ${DELIVERY_OUTCOMES.join(', ')}`);
  }
  for (const name of ['conversation', 'contact'] as const) {
    const v = values[name];
    if (v === undefined) continue;
    if (/^\d+$/.test(v)) filter[name] = v;
    else problems.push(`${name}: expected a numeric id`);
  }
  if (values.since) {
    const t = readSince(values.since, Date.now());
    if ('problem' in t)
      problems.push(
        `since: ${t.problem}; expected an age such as 30m, 2h, 7d, a date such as 2025-03-04 (UTC) or a timestamp with an offset`,
      );
    else filter.since = t.ms;
  }
  let where: string[] = [];
  if (values.where) {
    const w = whereTerms(values.where);
    if ('problem' in w) problems.push(`where: ${w.problem}`);
    else where = w.terms;
  }
  if (where.length > 0 && problems.length === 0) {
    const parsed = whereQuery(where, filter.event);
    if ('problems' in parsed) problems.push(...parsed.problems);
    else filter.where = parsed.query;
  }
  return { values, filter, where, problems };
}

/** An event name the catalogue does not know (or `schedule`, the schedule runs), in words with a did-you-mean. */
function eventProblem(event: string): string | null {
  if (event === 'schedule' || (EVENT_NAMES as readonly string[]).includes(event)) return null;
  const hint = suggestEventName(event);
  return `event: no event "${event}" in the catalogue${hint ? `; did you mean "${hint}"?` : ''} (switchyard events lists them)`;
}

/** The query box's terms as the CLI's `--where`: every term's problem at once, then the query of all of them. */
function whereQuery(terms: readonly string[], event: string | undefined): { query: WhereQuery } | { problems: string[] } {
  if (event === 'schedule') return { problems: ['where: reads an event body, and a schedule run has none (clear event schedule)'] };
  const scope = event as EventName | undefined;
  const said = (err: unknown) => {
    if (!(err instanceof WhereError)) throw err;
    return err.message.replace(/^--where /, 'where ');
  };
  const problems: string[] = [];
  for (const t of terms) {
    try {
      parseWhere(t, scope);
    } catch (err) {
      problems.push(said(err));
    }
  }
  if (problems.length) return { problems };
  try {
    return { query: parseWheres(terms, scope) };
  } catch (err) {
    return { problems: [said(err)] };
  }
}

/** The selection as a query string (links from the list to the rerun plan and back). */
export function selectionQuery(values: Values): string {
  const q = new URLSearchParams();
  for (const f of FIELDS) if (values[f]) q.set(f, values[f]);
  return q.toString();
}

/** The selection as hidden form fields: a form that acts on it carries exactly what was listed. */
export function hiddenSelection(values: Values): string {
  return FIELDS.filter((f) => values[f])
    .map((f) => `<input type="hidden" name="${f}" value="${escapeHtml(values[f])}">`)
    .join('');
}

/** The search form's fields, filled with `values`. */
export function selectionFields(values: Values): string {
  const input = (name: Field, label: string, hint: string) =>
    `<label>${label}<input name="${name}" value="${escapeHtml(values[name] ?? '')}" placeholder="${escapeHtml(hint)}"></label>`;
  const outcomeSelect = `<label>outcome<select name="outcome"><option value="">any</option>${[
    ...new Set([...DELIVERY_OUTCOMES, ...(values.outcome ? [values.outcome] : [])]),
  ]
    .map((o) => `<option${o === values.outcome ? ' selected' : ''}>${escapeHtml(o)}</option>`)
    .join('')}</select></label>`;
  const whereBox =
    '<label class="where">where (what the delivery carried: path op value; ops = != ~; ' +
    'several separated by spaces or lines, a value with spaces in quotes)' +
    `<textarea name="where" rows="2" cols="60" placeholder="data.contact.email=zoe@example.com&#10;data.body~&#34;refund request&#34;">` +
    `${escapeHtml(values.where ?? '')}</textarea></label>`;
  return (
    `${input('event', 'event', 'message.received')}${input('handler', 'handler', 'handler id')}${outcomeSelect}` +
    `${input('conversation', 'conversation', 'id')}${input('contact', 'contact', 'id')}` +
    `${input('since', 'since', '30m, 2h, 7d, 2025-03-04')}${whereBox}`
  );
}
