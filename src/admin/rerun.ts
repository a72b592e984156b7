import type { Context, Hono } from 'hono';
import { planRerun, RerunSelectionError, startRerun, type RerunDeps, type RerunPlan, type RerunSelection } from '../rerun/index.js';
import { formatDuration } from '../util/index.js';
import { escapeHtml, page, problemList, type HistorySource } from './page.js';
import { hiddenSelection, readSelection, selectionQuery, type Selection } from './selection.js';

/** What the admin needs to start reruns besides the history's Redis: the rerun engine's other dependencies. */
export interface AdminRerun {
  /** The handlers loaded now (the one re-run must be among them). */
  readonly handlers: () => RerunDeps['handlers'];
  readonly budget: RerunDeps['budget'];
  readonly bodies?: RerunDeps['bodies'];
}

/** The engine's dependencies for one request, acting as `by`. */
export function rerunDeps(history: HistorySource, rerun: AdminRerun, by: string): RerunDeps {
  return { redis: history.redis, prefix: history.prefix, handlers: rerun.handlers(), budget: rerun.budget, bodies: rerun.bodies, by };
}

/**
 * Starting a rerun from the deliveries page, for the deliveries listed (its filters and query box) and one
 * handler, in two steps like `switchyard rerun`: `GET <base>/deliveries/rerun?<selection>` shows the plan
 * (deliveries per event, the API calls they may spend, how long at the re-runs' share of the budget) with a
 * form that POSTs the same selection to the same path, which starts the batch and sends the browser to its
 * progress (`<base>/reruns/<batch>`, ./reruns.ts).
 */
export function mountRerunStart(app: Hono, basePath: string, history: HistorySource, rerun: AdminRerun, by: string): void {
  const path = `${basePath}/deliveries/rerun`;
  app.get(path, async (c) => {
    const sel = readSelection((name) => c.req.query(name));
    const asked = toRerunSelection(sel);
    if ('problems' in asked) return planProblems(c, basePath, sel, asked.problems);
    try {
      const plan = await planRerun(rerunDeps(history, rerun, by), asked.selection);
      return c.html(page(`Rerun ${plan.handler}`, basePath, planHtml(plan, sel, basePath, path)));
    } catch (err) {
      if (err instanceof RerunSelectionError) return planProblems(c, basePath, sel, [err.message]);
      throw err;
    }
  });
  app.post(path, async (c) => {
    const form = await c.req.parseBody();
    const sel = readSelection((name) => (typeof form[name] === 'string' ? form[name] : undefined));
    const asked = toRerunSelection(sel);
    if ('problems' in asked) return planProblems(c, basePath, sel, asked.problems);
    try {
      const started = await startRerun(rerunDeps(history, rerun, by), asked.selection);
      return c.redirect(`${basePath}/reruns/${encodeURIComponent(started.batch)}`, 303);
    } catch (err) {
      if (err instanceof RerunSelectionError) return planProblems(c, basePath, sel, [err.message]);
      throw err;
    }
  });
}

/** The page's selection as the engine's (the same filters and query box); its handler is the one run again. */
function toRerunSelection(sel: Selection): { selection: RerunSelection } | { problems: readonly string[] } {
  const problems = [...sel.problems];
  const { handler, ...filter } = sel.filter;
  if (!handler) problems.push('handler: choose the handler to run again');
  if (problems.length || !handler) return { problems };
  return { selection: { ...filter, handler } };
}

function backLink(basePath: string, sel: Selection): string {
  const q = selectionQuery(sel.values);
  return `<p><a href="${escapeHtml(`${basePath}/deliveries${q ? `?${q}` : ''}`)}">← back to these deliveries</a></p>`;
}

function planProblems(c: Context, basePath: string, sel: Selection, problems: readonly string[]): Response {
  return c.html(page('Rerun', basePath, `<h1>Rerun</h1>${problemList(problems)}${backLink(basePath, sel)}`), 400);
}

/** The budget sentence: how long the calls take at the re-runs' share. */
function budgetText(plan: RerunPlan): string {
  const b = plan.budget;
  const share = `the re-runs' share of the API budget (${Math.round(b.share * 100)} % of ${b.burst} calls per 10 s: ${b.callsPer10s} calls per 10 s, at low priority)`;
  if (plan.calls === 0) return `Their original runs made no API call, so they should take no time of ${share}.`;
  return `At ${share} their ${plan.calls} API calls take about ${formatDuration(plan.estimatedMs)}.`;
}

function planHtml(plan: RerunPlan, sel: Selection, basePath: string, path: string): string {
  const total = plan.items.length;
  const rows = plan.byEvent
    .map((e) => `<tr><td>${escapeHtml(e.event)}</td><td>${escapeHtml(e.deliveries)}</td><td>${escapeHtml(e.calls)}</td></tr>`)
    .join('');
  const table =
    total === 0
      ? '<p class="empty">Nothing to run again: no delivery of the selection can be re-run.</p>'
      : `<table class="plan"><thead><tr><th>Event</th><th>Deliveries</th><th>API calls (as the first time)</th></tr></thead>` +
        `<tbody>${rows}<tr><th>total</th><th>${escapeHtml(total)}</th><th>${escapeHtml(plan.calls)}</th></tr></tbody></table>`;
  const unmeasured = plan.unmeasured
    ? `<p class="muted">${escapeHtml(plan.unmeasured)} of them have no recorded attempt: their calls are not counted.</p>`
    : '';
  const skipped = plan.skipped.length
    ? `<p>Left out:</p><ul>${plan.skipped.map((s) => `<li>${escapeHtml(s.count)}: ${escapeHtml(s.reason)}</li>`).join('')}</ul>`
    : '';
  const more = plan.more
    ? `<p class="problems">The history holds more than was read (${escapeHtml(plan.scanned)}); narrow with since.</p>`
    : '';
  const confirm =
    total === 0
      ? ''
      : `<form method="post" action="${escapeHtml(path)}">${hiddenSelection(sel.values)}` +
        `<button type="submit">Run ${escapeHtml(total)} deliveries again with ${escapeHtml(plan.handler)}</button></form>`;
  return (
    `<h1>Rerun <code>${escapeHtml(plan.handler)}</code>: the plan</h1>${backLink(basePath, sel)}<div class="confirm">` +
    `<p>Each delivery below runs <strong>${escapeHtml(plan.handler)}</strong> again as a new run (new Idempotency-Keys, so it writes again), ` +
    `its history linked to the original. ${escapeHtml(budgetText(plan))}</p>${table}${unmeasured}${skipped}${more}` +
    `<p class="muted">The selection is read again when you confirm.</p>${confirm}</div>`
  );
}

/** Below the list of a process that runs no handler (`serve`): where reruns start instead. */
export const NO_RERUN_HERE =
  '<p class="muted">Reruns start from the admin of a process that runs the handlers (start, dev), or with <code>switchyard rerun</code>; ' +
  'this one only receives.</p>';

/** Below the list: run the deliveries listed (the same filters and query box) again with a handler, after its plan. */
export function rerunForm(rerun: AdminRerun, values: Selection['values'], root: string): string {
  const ids = rerun.handlers().map((h) => h.id);
  if (ids.length === 0)
    return '<p class="muted">No handler is loaded in this process, so no rerun can start here; `switchyard rerun` can.</p>';
  const { handler, ...rest } = values;
  const options = ids.map((id) => `<option${id === handler ? ' selected' : ''}>${escapeHtml(id)}</option>`).join('');
  return (
    `<h2>Run these again</h2><form class="search rerun" method="get" action="${escapeHtml(`${root}/rerun`)}">${hiddenSelection(rest)}` +
    `<label>handler<select name="handler">${options}</select></label><button type="submit">Plan a rerun…</button>` +
    '<span class="muted">the plan shows what it would do; nothing runs before you confirm</span></form>'
  );
}
