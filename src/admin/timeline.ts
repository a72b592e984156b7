import {
  operatorLine,
  relative,
  type AttemptEntry,
  type CallRecord,
  type FanOutEntry,
  type StepRecord,
  type Trace,
} from '../history/index.js';
import { escapeHtml } from './page.js';

/** The timeline of one delivery (`<base>/deliveries/<key>`): its facts, then receipt, fan-out, attempts with steps and calls. */

/** A state as a coloured badge. */
export function stateBadge(state: string): string {
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

/** A re-run's link to the run it re-ran, and an original's to each of its re-runs, with their batches. */
function rerunFacts(t: Trace, root: string): [string, string][] {
  const reruns = root.replace(/\/deliveries$/, '/reruns');
  const link = (href: string, text: string) => `<a class="key" href="${escapeHtml(href)}">${escapeHtml(text)}</a>`;
  const batch = (b: string | null) => (b ? `batch ${link(`${reruns}/${encodeURIComponent(b)}`, b)}` : 'no batch');
  const from = (s: string | null) => (s ? `, from step <code>${escapeHtml(s)}</code>` : '');
  const out: [string, string][] = [];
  const of = t.rerunOf;
  if (of)
    out.push([
      'rerun of',
      `${link(`${root}/${encodeURIComponent(of.key)}`, of.key)} (run <code>${escapeHtml(of.job)}</code>), ${batch(of.batch)}${from(of.fromStep)}`,
    ]);
  for (const r of t.reruns ?? []) {
    const self = link(`${root}/${encodeURIComponent(r.ref)}`, r.id);
    out.push([
      'rerun',
      `${self} of <strong>${escapeHtml(r.handler)}</strong> (${batch(r.batch)}${from(r.fromStep)}): ${stateBadge(r.outcome)}`,
    ]);
  }
  return out;
}

/** The page body of one delivery's timeline. */
export function timelineHtml(t: Trace, root: string): string {
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
  facts.push(...rerunFacts(t, root));

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
      case 'operator':
        items.push({ at: e.at, cls: 'operator', html: escapeHtml(operatorLine(e)) });
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
