import type { Context, Hono } from 'hono';
import {
  listDeliveries,
  PENDING_STATES,
  readTrace,
  type DeliveryFilter,
  type DeliverySummary,
  type Trace,
  type AttemptEntry,
  type CallRecord,
  type FanOutEntry,
  type StepRecord,
  relative,
} from '../history/index.js';
import type { RedisClient } from '../redis/index.js';
import { readSince } from '../util/index.js';
import { escapeHtml, page } from './page.js';

/** Where the history of deliveries is read from (the queues' Redis and prefix). */
export interface HistorySource {
  readonly redis: RedisClient;
  readonly prefix: string;
}

/**
 * The deliveries view beside the board: server-rendered HTML, no script, no
 * asset from elsewhere. Everything shown comes from the history (already
 * masked when written) and is escaped here.
 *
 *   <base>/deliveries                 the list, newest first, with a search form
 *   <base>/deliveries/<key>           the timeline of one delivery (key URL-encoded)
 *   <base>/deliveries/job/<job id>    redirects to the timeline of the job's delivery
 */
export function mountDeliveries(app: Hono, basePath: string, history: HistorySource): void {
  const root = `${basePath}/deliveries`;
  app.get(root, (c) => listPage(c, basePath, history));
  app.get(`${root}/`, (c) => c.redirect(root));
  // Job ids hold slashes (d/<key>/<handler>): the parameter takes the rest of the path.
  app.get(`${root}/job/:id{.+}`, async (c) => {
    // A job id pasted as the board shows it (d/<key>/<handler>, its key escaped as %2F, %3A, %25) reaches
    // us as it was typed; one URL-encoded as a whole (our links, the search form) is decoded once.
    const raw = new URL(c.req.url).pathname.slice(`${root}/job/`.length);
    const id = c.req.param('id');
    let trace = await readTrace(history.redis, history.prefix, id);
    if (!trace && raw !== id) trace = await readTrace(history.redis, history.prefix, raw);
    if (!trace) {
      const why = 'unknown, older than HISTORY_TTL, not fanned out yet, or HISTORY=off when it came';
      return c.html(
        page('Not found', basePath, `<p class="empty">Nothing recorded for job <code>${escapeHtml(id)}</code> (${why}).</p>`),
        404,
      );
    }
    return c.redirect(`${root}/${encodeURIComponent(trace.key)}`);
  });
  app.get(`${root}/:key{.+}`, async (c) => {
    const key = c.req.param('key');
    const trace = await readTrace(history.redis, history.prefix, key);
    if (!trace) {
      const why = 'unknown, older than HISTORY_TTL, or HISTORY=off when it came';
      return c.html(
        page('Not found', basePath, `<p class="empty">Nothing recorded for <code>${escapeHtml(key)}</code> (${why}).</p>`),
        404,
      );
    }
    return c.html(page(`Delivery ${trace.key}`, basePath, timelineHtml(trace, root)));
  });
}

const OUTCOMES = [
  'completed',
  'skipped',
  'retry',
  'delay',
  'dead',
  'pause',
  'error',
  'pending',
  'invalid',
  'no_handlers',
  ...PENDING_STATES,
];
const FIELDS = ['event', 'handler', 'outcome', 'conversation', 'contact', 'since'] as const;

async function listPage(c: Context, basePath: string, history: HistorySource): Promise<Response> {
  const root = `${basePath}/deliveries`;
  const q: Partial<Record<(typeof FIELDS)[number], string>> = {};
  for (const f of FIELDS) {
    const v = c.req.query(f)?.trim();
    if (v) q[f] = v;
  }
  const job = c.req.query('job')?.trim();
  if (job) return c.redirect(`${root}/job/${encodeURIComponent(job)}`);
  const problems: string[] = [];
  const filter: { -readonly [K in keyof DeliveryFilter]: DeliveryFilter[K] } = { limit: 100 };
  if (q.event) filter.event = q.event;
  if (q.handler) filter.handler = q.handler;
  if (q.outcome) {
    if (OUTCOMES.includes(q.outcome)) filter.outcome = q.outcome;
    else problems.push(`outcome: expected one of ${OUTCOMES.join(', ')}`);
  }
  for (const name of ['conversation', 'contact'] as const) {
    const v = q[name];
    if (v === undefined) continue;
    if (/^\d+$/.test(v)) filter[name] = v;
    else problems.push(`${name}: expected a numeric id`);
  }
  if (q.since) {
    const t = readSince(q.since, Date.now());
    if ('problem' in t)
      problems.push(
        `since: ${t.problem}; expected an age such as 30m, 2h, 7d, a date such as 2025-03-04 (UTC) or a timestamp with an offset`,
      );
    else filter.since = t.ms;
  }
  const input = (name: (typeof FIELDS)[number], label: string, hint: string) =>
    `<label>${label}<input name="${name}" value="${escapeHtml(q[name] ?? '')}" placeholder="${escapeHtml(hint)}"></label>`;
  const outcomeSelect = `<label>outcome<select name="outcome"><option value="">any</option>${[
    ...new Set([...OUTCOMES, ...(q.outcome ? [q.outcome] : [])]),
  ]
    .map((o) => `<option${o === q.outcome ? ' selected' : ''}>${escapeHtml(o)}</option>`)
    .join('')}</select></label>`;
  const fields =
    `${input('event', 'event', 'message.received')}${input('handler', 'handler', 'handler id')}${outcomeSelect}` +
    `${input('conversation', 'conversation', 'id')}${input('contact', 'contact', 'id')}` +
    `${input('since', 'since', '30m, 2h, 7d, 2025-03-04')}`;
  const jobField = '<label>job id (as the queue board shows it)<input name="job" size="48" placeholder="d/evt_…/handler-id"></label>';
  const form =
    `<form class="search" method="get" action="${escapeHtml(root)}">${fields}` +
    `<button type="submit">Search</button> <a href="${escapeHtml(root)}">clear</a></form>` +
    `<form class="search" method="get" action="${escapeHtml(root)}">${jobField}<button type="submit">Open its timeline</button></form>`;
  if (problems.length) {
    const problemList = `<ul class="problems">${problems.map((p) => `<li>${escapeHtml(p)}</li>`).join('')}</ul>`;
    return c.html(page('Deliveries', basePath, `<h1>Deliveries</h1>${form}${problemList}`), 400);
  }
  const r = await listDeliveries(history.redis, history.prefix, filter);
  const now = Date.now();
  const rows = r.deliveries.map((d) => rowHtml(d, root, now)).join('');
  const table =
    r.deliveries.length === 0
      ? '<p class="empty">No delivery in the history matches.</p>'
      : `<table class="deliveries"><thead>${DELIVERIES_HEAD}</thead><tbody>${rows}</tbody></table>`;
  const limitReached = r.deliveries.length >= (filter.limit ?? 100);
  const moreText = limitReached
    ? `The newest ${r.deliveries.length} shown; narrow the search for more.`
    : `Stopped after reading ${r.scanned} deliveries; narrow with since for older ones.`;
  const more = r.more ? `<p class="more">${moreText}</p>` : '';
  return c.html(page('Deliveries', basePath, `<h1>Deliveries</h1>${form}${table}${more}`));
}

const DELIVERIES_HEAD = '<tr><th>Key</th><th>Event</th><th>Received</th><th>Conversation</th><th>Contact</th><th>Handlers</th></tr>';

function stateBadge(state: string): string {
  const cls =
    state === 'dead' || state === 'error' || state === 'invalid'
      ? 'bad'
      : state === 'completed'
        ? 'ok'
        : state === 'skipped'
          ? 'muted'
          : 'wait';
  return `<span class="state ${cls}">${escapeHtml(state)}</span>`;
}

function receivedTime(receivedAt: string, now: number): string {
  const ago = `${relative(now - Date.parse(receivedAt)).replace('+', '')} ago`;
  return `<time datetime="${escapeHtml(receivedAt)}" title="${escapeHtml(receivedAt)}">${escapeHtml(ago)}</time>`;
}

function rowHtml(d: DeliverySummary, root: string, now: number): string {
  const handlers =
    d.state === 'invalid' || Object.keys(d.handlers).length === 0
      ? stateBadge(d.state ?? '-')
      : Object.entries(d.handlers)
          .map(([h, s]) => `<span class="handler">${escapeHtml(h)} ${stateBadge(s)}</span>`)
          .join(' ');
  const received = d.receivedAt ? receivedTime(d.receivedAt, now) : '?';
  const href = `${root}/${encodeURIComponent(d.key)}`;
  return (
    `<tr><td><a class="key" href="${escapeHtml(href)}">${escapeHtml(d.key)}</a></td><td>${escapeHtml(d.event ?? '?')}</td>` +
    `<td>${received}</td><td>${escapeHtml(d.conversation ?? '-')}</td><td>${escapeHtml(d.contact ?? '-')}</td><td>${handlers}</td></tr>`
  );
}

const callFailed = (c: CallRecord) => c.status === 0 || c.status >= 400;

function callRow(c: CallRecord): string {
  const failed = callFailed(c);
  const status = c.status ? escapeHtml(c.status) : 'no answer';
  const key = c.idempotencyKey ? `<code>${escapeHtml(c.idempotencyKey)}</code>` : '-';
  const wait = c.waitMs > 0 ? `${escapeHtml(c.waitMs)} ms` : '-';
  const clientTry = c.try > 1 ? ` (client try ${escapeHtml(c.try)})` : '';
  const error = c.error ? `<div class="error">${escapeHtml(c.error)}</div>` : '';
  return (
    `<tr class="call${failed ? ' failed' : ''}"><td class="mark">${failed ? '✗' : '✓'}</td>` +
    `<td>${escapeHtml(c.method)}</td><td class="path">${escapeHtml(c.path)}</td>` +
    `<td class="status">${status}</td><td>${key}</td>` +
    `<td>${c.replayed ? 'replayed' : '-'}</td><td>${escapeHtml(c.ms)} ms</td><td>${wait}</td>` +
    `<td>${escapeHtml(c.op)}${clientTry}${error}</td></tr>`
  );
}

const CALLS_HEAD =
  '<tr><th></th><th>Method</th><th>Path</th><th>Status</th><th>Idempotency-Key</th>' +
  '<th>Replayed</th><th>Duration</th><th>Limiter wait</th><th>Operation</th></tr>';

function stepSource(source: StepRecord['source']): string {
  return source === 'stored' ? 'taken from the store (ran before)' : source === 'run' ? 'ran' : '<span class="bad">failed</span>';
}

function attemptHtml(a: AttemptEntry): string {
  const outcome = a.outcome === 'dead' ? 'dead (dead-lettered)' : a.outcome;
  const job = a.job ? ` (job <code>${escapeHtml(a.job)}</code>)` : '';
  const outcomeClass = a.outcome === 'dead' || a.outcome === 'error' ? 'bad' : a.outcome === 'completed' ? 'ok' : 'wait';
  const head =
    `<div class="attempt-head"><strong>${escapeHtml(a.handler)}</strong> attempt ${escapeHtml(a.attempt)}${job} → ` +
    `<span class="state ${outcomeClass}">${escapeHtml(outcome)}</span>` +
    `${a.skipped ? ` (${escapeHtml(a.skipped)})` : ''} <span class="muted">${escapeHtml(a.at - a.startedAt)} ms</span></div>`;
  const error = a.error ? `<div class="error">${escapeHtml(a.error.class)}: ${escapeHtml(a.error.message)}</div>` : '';
  const steps = a.steps.length
    ? `<ul class="steps">${a.steps.map((s) => `<li>step <code>${escapeHtml(s.name)}</code>: ${stepSource(s.source)}</li>`).join('')}</ul>`
    : '';
  const calls = a.calls.length
    ? `<table class="calls"><thead>${CALLS_HEAD}</thead><tbody>${a.calls.map(callRow).join('')}</tbody></table>`
    : a.outcome === 'skipped'
      ? ''
      : '<p class="muted">(no API calls)</p>';
  const dropped = a.callsDropped ? `<p class="muted">… ${escapeHtml(a.callsDropped)} more calls not kept (size cap)</p>` : '';
  return `${head}${error}${steps}${calls}${dropped}`;
}

function fanoutHtml(e: FanOutEntry): string {
  if (e.handlers.length === 0) return 'no handler subscribes to this event';
  return e.handlers.map((h) => `${escapeHtml(h.id)} (${escapeHtml(h.placement)}, ${escapeHtml(h.priority)})`).join(', ');
}

function timelineHtml(t: Trace, root: string): string {
  const t0 = t.receivedAt ? Date.parse(t.receivedAt) : (t.entries[0]?.at ?? 0);
  const facts: [string, string][] = [['event', escapeHtml(t.event ?? '?')]];
  if (t.conversation) facts.push(['conversation', escapeHtml(t.conversation)]);
  if (t.contact) facts.push(['contact', escapeHtml(t.contact)]);
  const schedule = t.source === 'schedule';
  if (t.receivedAt && schedule)
    facts.push(['tick', `${escapeHtml(t.receivedAt)} (a schedule run: made by the schedules queue, not sent by the workspace)`]);
  else if (t.receivedAt) {
    const bytes = t.bytes !== null ? `, ${escapeHtml(t.bytes)} bytes` : '';
    const verified = t.secretIndex !== null ? `, verified with secret #${escapeHtml(t.secretIndex)}` : '';
    facts.push(['received', `${escapeHtml(t.receivedAt)}${bytes}${verified}`]);
  }
  if (t.duplicates > 0) facts.push(['repeats', `${escapeHtml(t.duplicates)} (answered 200 duplicate; nothing more was done)`]);
  const handlers = Object.entries(t.handlers);
  if (handlers.length) facts.push(['handlers', handlers.map(([h, s]) => `${escapeHtml(h)} ${stateBadge(s)}`).join(', ')]);
  if (t.state === 'invalid') facts.push(['state', `${stateBadge('invalid')} dead-lettered in the events queue without fan-out`]);
  if (t.expiresInMs !== null) facts.push(['kept', `${escapeHtml(Math.round(t.expiresInMs / 3_600_000))} h more (HISTORY_TTL)`]);

  const items: { at: number; cls: string; html: string }[] = [];
  if (t.receivedAt) items.push({ at: t0, cls: 'receipt', html: schedule ? 'tick' : 'received' });
  if (t.queuedAt) items.push({ at: Date.parse(t.queuedAt), cls: 'queued', html: 'queued (events)' });
  for (const e of t.entries) {
    switch (e.kind) {
      case 'fanout':
        items.push({ at: e.at, cls: 'fanout', html: `fan-out: ${fanoutHtml(e)}` });
        break;
      case 'invalid':
        items.push({ at: e.at, cls: 'invalid failed', html: `invalid: <span class="error">${escapeHtml(e.reason)}</span>` });
        break;
      case 'attempt': {
        const failed = e.outcome === 'dead' || e.outcome === 'error' ? ' failed' : '';
        items.push({ at: e.startedAt, cls: `attempt outcome-${e.outcome}${failed}`, html: attemptHtml(e) });
        break;
      }
      case 'body':
        items.push({ at: e.at, cls: 'body', html: `body (redacted):<pre>${escapeHtml(e.body)}</pre>` });
        break;
    }
  }
  const itemHtml = (i: (typeof items)[number]) =>
    `<li class="${escapeHtml(i.cls)}"><span class="at">${escapeHtml(relative(i.at - t0))}</span><div class="what">${i.html}</div></li>`;
  const list = items.map(itemHtml).join('');
  const title = `<h1>${schedule ? 'Schedule run' : 'Delivery'} <code>${escapeHtml(t.key)}</code></h1>`;
  return (
    `<p><a href="${escapeHtml(root)}">← all deliveries</a></p>${title}` +
    `<dl class="facts">${facts.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('')}</dl>` +
    `<h2>Timeline</h2><p class="muted">Times relative to ${schedule ? 'the tick' : 'receipt'}.</p><ol class="timeline">${list}</ol>`
  );
}
