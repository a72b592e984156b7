import type { Hono } from 'hono';
import { formatDuration } from '../util/index.js';
import { RunRecords, type ParkedRun, type RunActor } from '../queue/index.js';
import { escapeHtml, page, type HistorySource } from './page.js';
import { actionButtons, doneNotice, mountWaitActions, type WaitOps } from './waits-actions.js';

/** Rows the page shows at most (the soonest due). */
const MAX_ROWS = 500;

/**
 * The waits view beside the board (`<base>/waits`): the handler runs parked
 * now in a durable sleep or wait, soonest due first, each linked to its
 * delivery's timeline; filtered by handler and kind. Server-rendered, no
 * script; everything shown is escaped. With `actions`, each row has a Cancel and a Wake button
 * (./waits-actions.ts), done in the name of `actor`. With `loaded` (the handler modules of this process), a run
 * of a handler no module defines is marked: nothing will ever run it, so it can only be cancelled.
 */
export function mountWaits(
  app: Hono,
  basePath: string,
  source: HistorySource,
  opts: { actions?: { ops: WaitOps; actor: RunActor }; loaded?: () => readonly { readonly id: string }[] } = {},
): void {
  const { actions } = opts;
  const root = `${basePath}/waits`;
  app.get(`${root}/`, (c) => c.redirect(root));
  if (actions) mountWaitActions(app, basePath, source, actions.ops, actions.actor);
  app.get(root, async (c) => {
    const handler = c.req.query('handler')?.trim() || undefined;
    const kindQuery = c.req.query('kind')?.trim() || undefined;
    const kind = kindQuery === 'sleep' ? 'sleep' : kindQuery === 'wait' ? 'wait-for-event' : undefined;
    const handlerField = `<label>handler<input name="handler" value="${escapeHtml(handler ?? '')}" placeholder="handler id"></label>`;
    const kindOptions = ['sleep', 'wait'].map((k) => `<option${k === kindQuery ? ' selected' : ''}>${k}</option>`).join('');
    const form =
      `<form class="search" method="get" action="${escapeHtml(root)}">${handlerField}` +
      `<label>kind<select name="kind"><option value="">any</option>${kindOptions}</select></label>` +
      `<button type="submit">Search</button> <a href="${escapeHtml(root)}">clear</a></form>`;
    if (kindQuery !== undefined && kind === undefined) {
      return c.html(page('Waits', basePath, `<h1>Waits</h1>${form}<ul class="problems"><li>kind: expected sleep or wait</li></ul>`), 400);
    }
    const all = await new RunRecords(source.redis, source.prefix).parked();
    const now = Date.now();
    const runs = all.filter((r) => (handler === undefined || r.handler === handler) && (kind === undefined || r.kind === kind));
    const shown = runs.slice(0, MAX_ROWS);
    const loaded = opts.loaded ? new Set(opts.loaded().map((h) => h.id)) : undefined;
    const orphan = (r: ParkedRun) => loaded !== undefined && loaded.size > 0 && !loaded.has(r.handler);
    const shownRows = shown.map((r) => rowHtml(r, basePath, now, actions !== undefined, orphan(r))).join('');
    const table =
      all.length === 0
        ? '<p class="empty">No run is sleeping or waiting.</p>'
        : runs.length === 0
          ? `<p class="empty">No parked run matches (${all.length} parked in all).</p>`
          : `<table class="waits"><thead>${waitsHead(actions !== undefined)}</thead><tbody>${shownRows}</tbody></table>`;
    const more =
      runs.length > shown.length
        ? `<p class="more">The ${shown.length} soonest due of ${runs.length} shown; filter by handler or kind for the rest.</p>`
        : '';
    const intro =
      `<p class="muted">${all.length} run${all.length === 1 ? '' : 's'} parked in a durable sleep or wait ` +
      '(ctx.sleep, ctx.sleepUntil, ctx.waitForEvent), soonest due first. ' +
      'A parked run holds no worker slot, lock or API budget; a wait times out at its due time unless its event comes first.</p>';
    const notice = doneNotice(c.req.query('done'), c.req.query('run'));
    return c.html(page('Waits', basePath, `<h1>Waits</h1>${notice}${intro}${orphansNote(all.filter(orphan))}${form}${table}${more}`));
  });
}

const waitsHead = (withActions: boolean) =>
  `<tr><th>Due</th><th>Handler</th><th>Kind</th><th>Name</th><th>Waiting for</th><th>Delivery</th>${withActions ? '<th></th>' : ''}</tr>`;

/** The handlers whose parked runs no module defines any more, each with the command that cancels them. */
function orphansNote(orphans: readonly ParkedRun[]): string {
  if (orphans.length === 0) return '';
  const ids = [...new Set(orphans.map((r) => r.handler))];
  const items = ids.map(
    (id) => `<li><strong>${escapeHtml(id)}</strong>: <code>switchyard waits cancel --handler ${escapeHtml(id)}</code></li>`,
  );
  return (
    `<div class="problems"><p>${orphans.length} parked run${orphans.length === 1 ? ' belongs' : 's belong'} to handlers no module of this process defines: ` +
    'nothing will ever run them. Cancel them here or with:</p>' +
    `<ul>${items.join('')}</ul></div>`
  );
}

function rowHtml(r: ParkedRun, basePath: string, now: number, withActions: boolean, orphan: boolean): string {
  const due = new Date(r.dueAt).toISOString();
  const inMs = r.dueAt - now;
  const when = inMs < 0 ? `overdue ${formatDuration(-inMs)}` : `in ${formatDuration(inMs)}`;
  const target = r.kind === 'sleep' ? '-' : `${escapeHtml(r.event ?? '?')} <code>${escapeHtml(r.key ?? '')}</code>`;
  const delivery = `${basePath}/deliveries/${encodeURIComponent(r.deliveryKey)}`;
  const time = `<time datetime="${escapeHtml(due)}" title="${escapeHtml(due)}">${escapeHtml(when)}</time>`;
  return (
    `<tr><td>${time}</td><td>${escapeHtml(r.handler)}${orphan ? ' <span class="state bad">not loaded</span>' : ''}</td>` +
    `<td>${r.kind === 'sleep' ? 'sleep' : 'wait'}</td><td>${escapeHtml(r.name)}</td><td>${target}</td>` +
    `<td><a class="key" href="${escapeHtml(delivery)}">${escapeHtml(r.deliveryKey)}</a></td>` +
    `${withActions ? `<td>${actionButtons(r, `${basePath}/waits`)}</td>` : ''}</tr>`
  );
}
