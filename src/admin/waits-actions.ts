import type { Context, Hono } from 'hono';
import { formatDuration } from '../util/index.js';
import { RunRecords, type ParkedRun } from '../queue/index.js';
import { escapeHtml, page, type HistorySource } from './page.js';

/** What the waits page does to one parked run; false when it is not parked (any more). */
export interface WaitActions {
  cancel(run: ParkedRun, actor: string): Promise<boolean>;
  wake(run: ParkedRun, actor: string): Promise<boolean>;
}

const ACTIONS = {
  cancel: { verb: 'Cancel', done: 'cancelled' },
  wake: { verb: 'Wake', done: 'woken' },
} as const;
type Action = keyof typeof ACTIONS;

/**
 * Cancel and Wake of the waits page, each in two steps without script: `GET <base>/waits/<action>?run=<scope>`
 * asks for confirmation with what will happen, its form POSTs to the same path, which acts (recorded in the run's
 * history as done by `actor`) and sends the browser back to the list with a notice.
 */
export function mountWaitActions(app: Hono, basePath: string, source: HistorySource, actions: WaitActions, actor: string): void {
  const root = `${basePath}/waits`;
  for (const action of Object.keys(ACTIONS) as Action[]) {
    app.get(`${root}/${action}`, async (c) => {
      const run = await parkedRun(c, source);
      if (!run) return gone(c, basePath);
      return c.html(page(`${ACTIONS[action].verb} a parked run`, basePath, confirmHtml(action, run, root, basePath, actor)));
    });
    app.post(`${root}/${action}`, async (c) => {
      const run = await parkedRun(c, source);
      if (!run || !(await actions[action](run, actor))) return gone(c, basePath);
      return c.redirect(`${root}?${new URLSearchParams({ done: action, run: run.scope }).toString()}`, 303);
    });
  }
}

/** The parked run named by the request's `run` (query or form); null when none is parked under it. */
async function parkedRun(c: Context, source: HistorySource): Promise<ParkedRun | null> {
  const form = c.req.method === 'POST' ? await c.req.parseBody() : {};
  const scope = (typeof form.run === 'string' ? form.run : c.req.query('run'))?.trim();
  if (!scope) return null;
  const runs = await new RunRecords(source.redis, source.prefix).parked();
  return runs.find((r) => r.scope === scope) ?? null;
}

function gone(c: Context, basePath: string): Response {
  const body =
    '<h1>Not parked</h1><p class="problems">No run is parked under this name now: it woke, finished or was cancelled ' +
    `meanwhile, or the link is wrong. Nothing was done.</p><p><a href="${escapeHtml(`${basePath}/waits`)}">← the parked runs</a></p>`;
  return c.html(page('Not parked', basePath, body), 404);
}

function what(action: Action, run: ParkedRun): string {
  const waitFor = run.kind === 'sleep' ? `its sleep <code>${escapeHtml(run.name)}</code>` : `its wait <code>${escapeHtml(run.name)}</code>`;
  if (action === 'cancel') return `The run stops now, as cancelled: nothing after ${waitFor} runs, and it is not retried.`;
  return run.kind === 'sleep'
    ? `The sleep <code>${escapeHtml(run.name)}</code> ends now and the run goes on from there.`
    : `The wait <code>${escapeHtml(run.name)}</code> returns null now, as if it had timed out, and the run goes on from there.`;
}

function confirmHtml(action: Action, run: ParkedRun, root: string, basePath: string, actor: string): string {
  const due = run.dueAt - Date.now();
  const when = due < 0 ? `overdue ${formatDuration(-due)}` : `due in ${formatDuration(due)}`;
  const delivery = `${basePath}/deliveries/${encodeURIComponent(run.deliveryKey)}`;
  const verb = ACTIONS[action].verb;
  return (
    `<h1>${verb} a parked run?</h1><div class="confirm">` +
    `<p>Handler <strong>${escapeHtml(run.handler)}</strong>, delivery <a class="key" href="${escapeHtml(delivery)}">${escapeHtml(run.deliveryKey)}</a>, ` +
    `${run.kind === 'sleep' ? 'sleeping' : 'waiting'} in <code>${escapeHtml(run.name)}</code> (${escapeHtml(when)}).</p>` +
    `<p>${what(action, run)} The delivery's history records it as ${ACTIONS[action].done} by ${escapeHtml(actor)}.</p>` +
    `<form method="post" action="${escapeHtml(`${root}/${action}`)}"><input type="hidden" name="run" value="${escapeHtml(run.scope)}">` +
    `<button type="submit"${action === 'cancel' ? ' class="danger"' : ''}>${verb} this run</button> ` +
    `<a href="${escapeHtml(root)}">back, do nothing</a></form></div>`
  );
}

/** The notice above the list after an action (`?done=<action>&run=<scope>`); empty without one. */
export function doneNotice(done: string | undefined, scope: string | undefined): string {
  if (!scope || (done !== 'cancel' && done !== 'wake')) return '';
  return `<p class="notice">Run <code>${escapeHtml(scope)}</code> ${ACTIONS[done].done}.</p>`;
}

/** The Cancel and Wake buttons of a row: each opens its confirmation. */
export function actionButtons(run: ParkedRun, root: string): string {
  return (Object.keys(ACTIONS) as Action[])
    .map(
      (a) =>
        `<form class="inline" method="get" action="${escapeHtml(`${root}/${a}`)}"><input type="hidden" name="run" value="${escapeHtml(run.scope)}">` +
        `<button type="submit">${ACTIONS[a].verb}…</button></form>`,
    )
    .join(' ');
}
