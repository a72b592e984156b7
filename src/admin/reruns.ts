import type { Context, Hono } from 'hono';
import { cancelRerun, listReruns, rerunFailures, rerunStatus, UnknownBatchError, type RerunStatus } from '../rerun/index.js';
import { formatDuration } from '../util/index.js';
import { escapeHtml, page, type HistorySource } from './page.js';

/** Seconds between reloads of a running batch's page. */
const REFRESH_S = 2;

/**
 * The rerun batches (`switchyard rerun status`): `<base>/reruns` lists the kept ones, newest first;
 * `<base>/reruns/<batch>` shows one's progress (done, failed, total, ETA; reloaded every few seconds while it
 * runs) and its failed runs, with a Cancel button that POSTs to `<base>/reruns/<batch>/cancel`.
 */
export function mountReruns(app: Hono, basePath: string, history: HistorySource, by: string): void {
  const root = `${basePath}/reruns`;
  const deps = { redis: history.redis, prefix: history.prefix, by };
  app.get(root, async (c) => {
    const batches = await listReruns(deps, 50);
    const rows = batches.map((s) => listRow(s, root)).join('');
    const body = batches.length
      ? `<table class="reruns"><thead>${LIST_HEAD}</thead><tbody>${rows}</tbody></table>`
      : '<p class="empty">No rerun batch is kept (they are kept 7 days after they end). Start one from the deliveries page.</p>';
    return c.html(page('Reruns', basePath, `<h1>Reruns</h1>${body}`));
  });
  app.get(`${root}/:batch`, async (c) => {
    const batch = c.req.param('batch');
    try {
      const s = await rerunStatus(deps, batch);
      const failures = s.failed > 0 ? await rerunFailures(deps, batch) : [];
      const running = s.state === 'running' || s.state === 'cancelling';
      return c.html(page(`Rerun ${batch}`, basePath, statusHtml(s, failures, root, basePath), running ? REFRESH_S : undefined));
    } catch (err) {
      return unknown(c, basePath, err);
    }
  });
  app.post(`${root}/:batch/cancel`, async (c) => {
    const batch = c.req.param('batch');
    try {
      await cancelRerun(deps, batch);
      return c.redirect(`${root}/${encodeURIComponent(batch)}`, 303);
    } catch (err) {
      return unknown(c, basePath, err);
    }
  });
}

function unknown(c: Context, basePath: string, err: unknown): Response {
  if (!(err instanceof UnknownBatchError)) throw err;
  const back = `<p><a href="${escapeHtml(`${basePath}/reruns`)}">← the rerun batches</a></p>`;
  return c.html(page('Unknown rerun', basePath, `<h1>Unknown rerun</h1><p class="problems">${escapeHtml(err.message)}</p>${back}`), 404);
}

const LIST_HEAD =
  '<tr><th>Batch</th><th>Handler</th><th>State</th><th>Done</th><th>Failed</th><th>Total</th><th>Started</th><th>By</th></tr>';

function listRow(s: RerunStatus, root: string): string {
  const href = `${root}/${encodeURIComponent(s.batch)}`;
  return (
    `<tr><td><a class="key" href="${escapeHtml(href)}">${escapeHtml(s.batch)}</a></td><td>${escapeHtml(s.handler)}</td>` +
    `<td>${escapeHtml(s.state)}</td><td>${escapeHtml(s.done)}</td><td>${escapeHtml(s.failed)}</td><td>${escapeHtml(s.total)}</td>` +
    `<td>${escapeHtml(s.createdAt)}</td><td>${escapeHtml(s.by || '-')}</td></tr>`
  );
}

function stateText(s: RerunStatus): string {
  switch (s.state) {
    case 'running':
      return s.etaMs === null || s.etaMs <= 0 ? 'running' : `running, about ${formatDuration(s.etaMs)} left`;
    case 'cancelling':
      return `cancelled${s.cancelledBy ? ` by ${s.cancelledBy}` : ''}; ${s.open} run${s.open === 1 ? '' : 's'} already started finishing`;
    case 'cancelled':
      return `cancelled${s.cancelledBy ? ` by ${s.cancelledBy}` : ''}`;
    case 'done':
      return 'done';
  }
}

function statusHtml(s: RerunStatus, failures: readonly { key: string; reason: string }[], root: string, basePath: string): string {
  const ended = s.done + s.failed;
  const facts: [string, string][] = [
    ['handler', escapeHtml(s.handler)],
    ['state', `<strong class="rerun-state">${escapeHtml(stateText(s))}</strong>`],
    [
      'progress',
      `<progress max="${escapeHtml(Math.max(1, s.total))}" value="${escapeHtml(ended + s.cancelled)}"></progress> ` +
        `<span class="rerun-progress">${escapeHtml(s.done)} done, ${escapeHtml(s.failed)} failed` +
        `${s.cancelled ? `, ${escapeHtml(s.cancelled)} cancelled` : ''} of ${escapeHtml(s.total)}</span>` +
        (s.open ? ` <span class="muted">(${escapeHtml(s.open)} in the queue now)</span>` : ''),
    ],
    ['started', `${escapeHtml(s.createdAt)}${s.by ? ` by ${escapeHtml(s.by)}` : ''}`],
  ];
  if (s.endedAt) facts.push(['ended', escapeHtml(s.endedAt)]);
  facts.push(['API calls planned', escapeHtml(s.calls)]);
  const failed = failures.length
    ? `<h2>Failed runs</h2><ul>${failures
        .map((f) => {
          const href = `${basePath}/deliveries/${encodeURIComponent(f.key)}`;
          return `<li><a class="key" href="${escapeHtml(href)}">${escapeHtml(f.key)}</a>: ${escapeHtml(f.reason)}</li>`;
        })
        .join('')}</ul>`
    : '';
  const cancel =
    s.state === 'running'
      ? `<form method="post" action="${escapeHtml(`${root}/${encodeURIComponent(s.batch)}/cancel`)}">` +
        '<button type="submit" class="danger">Cancel this rerun</button> <span class="muted">runs not started are dropped; started ones finish</span></form>'
      : '';
  return (
    `<p><a href="${escapeHtml(root)}">← the rerun batches</a></p><h1>Rerun <code>${escapeHtml(s.batch)}</code></h1>` +
    `<dl class="facts">${facts.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join('')}</dl>${cancel}${failed}`
  );
}
