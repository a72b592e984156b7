import type { Context, Hono } from 'hono';
import { formatDuration } from '../util/index.js';
import { cancelParkedRuns, RunRecords, wakeParkedRun, type ParkedRun, type ParkedRunDeps, type RunActor } from '../queue/index.js';
import { escapeHtml, page, type HistorySource } from './page.js';

/** What the waits page needs to operate parked runs besides the history's Redis: the handler queues, the history's writer. */
export type WaitOps = Omit<ParkedRunDeps, 'redis' | 'prefix'>;

type Action = 'cancel' | 'wake';
const VERB: Record<Action, string> = { cancel: 'Cancel', wake: 'Wake' };

/**
 * Cancel and Wake of the waits page, each in two steps without script: `GET <base>/waits/<action>?run=<scope>`
 * asks for confirmation with what will happen, its form POSTs to the same path, which acts through the core
 * (src/queue/waits/ops.ts: recorded in the delivery's history as done by `actor`, via `admin`) and sends the
 * browser back to the list with what became of the run.
 */
export function mountWaitActions(app: Hono, basePath: string, source: HistorySource, ops: WaitOps, actor: RunActor): void {
  const root = `${basePath}/waits`;
  const deps: ParkedRunDeps = { ...ops, redis: source.redis, prefix: source.prefix };
  for (const action of ['cancel', 'wake'] as const) {
    app.get(`${root}/${action}`, async (c) => {
      const run = await parkedRun(c, source, c.req.query('run'));
      if (!run) return gone(c, basePath);
      return c.html(page(`${VERB[action]} a parked run`, basePath, confirmHtml(action, run, root, basePath, actor)));
    });
    app.post(`${root}/${action}`, async (c) => {
      const form = await c.req.parseBody();
      const run = await parkedRun(c, source, typeof form.run === 'string' ? form.run : undefined);
      if (!run) return gone(c, basePath);
      const reason = typeof form.reason === 'string' && form.reason.trim() ? form.reason.trim().slice(0, 200) : undefined;
      const who: RunActor = reason ? { ...actor, reason } : actor;
      const status =
        action === 'cancel'
          ? ((await cancelParkedRuns(deps, [run], who))[0]?.status ?? 'finished')
          : (await wakeParkedRun(deps, run, who)).status;
      return c.redirect(`${root}?${new URLSearchParams({ done: status, run: run.scope }).toString()}`, 303);
    });
  }
}

/** The parked run named `scope`; null when none is parked under it. */
async function parkedRun(c: Context, source: HistorySource, scope: string | undefined): Promise<ParkedRun | null> {
  const s = scope?.trim();
  return s ? new RunRecords(source.redis, source.prefix).one(s) : null;
}

function gone(c: Context, basePath: string): Response {
  const body =
    '<h1>Not parked</h1><p class="problems">No run is parked under this name now: it woke, finished or was cancelled ' +
    `meanwhile, or the link is wrong. Nothing was done.</p><p><a href="${escapeHtml(`${basePath}/waits`)}">← the parked runs</a></p>`;
  return c.html(page('Not parked', basePath, body), 404);
}

function what(action: Action, run: ParkedRun): string {
  const name = `<code>${escapeHtml(run.name)}</code>`;
  if (action === 'cancel')
    return `The run stops now, as cancelled: nothing after its ${run.kind === 'sleep' ? 'sleep' : 'wait'} ${name} runs, and it is not retried.`;
  return run.kind === 'sleep'
    ? `The sleep ${name} ends now and the run goes on from there.`
    : `The wait ${name} returns null now, as if it had timed out, and the run goes on from there.`;
}

function confirmHtml(action: Action, run: ParkedRun, root: string, basePath: string, actor: RunActor): string {
  const due = run.dueAt - Date.now();
  const when = due < 0 ? `overdue ${formatDuration(-due)}` : `due in ${formatDuration(due)}`;
  const delivery = `${basePath}/deliveries/${encodeURIComponent(run.deliveryKey)}`;
  const done = action === 'cancel' ? 'cancelled' : 'woken';
  return (
    `<h1>${VERB[action]} a parked run?</h1><div class="confirm">` +
    `<p>Handler <strong>${escapeHtml(run.handler)}</strong>, delivery <a class="key" href="${escapeHtml(delivery)}">${escapeHtml(run.deliveryKey)}</a>, ` +
    `${run.kind === 'sleep' ? 'sleeping' : 'waiting'} in <code>${escapeHtml(run.name)}</code> (${escapeHtml(when)}).</p>` +
    `<p>${what(action, run)} The delivery's history records it as ${done} by ${escapeHtml(actor.who)} (${escapeHtml(actor.via)}).</p>` +
    `<form method="post" action="${escapeHtml(`${root}/${action}`)}"><input type="hidden" name="run" value="${escapeHtml(run.scope)}">` +
    '<p><label>reason (optional, kept in the history)<br><input name="reason" size="60" maxlength="200"></label></p>' +
    `<button type="submit"${action === 'cancel' ? ' class="danger"' : ''}>${VERB[action]} this run</button> ` +
    `<a href="${escapeHtml(root)}">back, do nothing</a></form></div>`
  );
}

/** What became of the run, as the list's notice says it (`?done=<status>&run=<scope>`). */
const DONE: Record<string, { ok: boolean; text: string }> = {
  cancelled: { ok: true, text: 'cancelled: no further step runs' },
  woken: { ok: true, text: 'woken: its sleep ended, it runs on now' },
  timeout: { ok: true, text: 'woken: its wait returned null, it runs on now' },
  matched: { ok: true, text: 'was answered by an event before the wake: it runs on with that event' },
  running: { ok: false, text: 'is running right now (it woke at this moment): nothing was changed; look again in a moment' },
  finished: { ok: false, text: 'is not parked any more (it ended, or someone else acted first): nothing was changed' },
};

/** The notice above the list after an action; empty without one. */
export function doneNotice(done: string | undefined, scope: string | undefined): string {
  const d = done === undefined ? undefined : DONE[done];
  if (!scope || !d) return '';
  return `<p class="${d.ok ? 'notice' : 'problems'}">Run <code>${escapeHtml(scope)}</code> ${escapeHtml(d.text)}.</p>`;
}

/** The Cancel and Wake buttons of a row: each opens its confirmation. */
export function actionButtons(run: ParkedRun, root: string): string {
  return (['cancel', 'wake'] as const)
    .map(
      (a) =>
        `<form class="inline" method="get" action="${escapeHtml(`${root}/${a}`)}"><input type="hidden" name="run" value="${escapeHtml(run.scope)}">` +
        `<button type="submit">${VERB[a]}…</button></form>`,
    )
    .join(' ');
}
