/** The admin pages' shared frame: escaping, the style sheet, the header with its links. */
import type { RedisClient } from '../redis/index.js';

/** Where the history of deliveries is read from (the queues' Redis and prefix). */
export interface HistorySource {
  readonly redis: RedisClient;
  readonly prefix: string;
}

/** `&`, `<`, `>`, `"`, `'` as entities: safe in text and in quoted attributes. */
export function escapeHtml(value: string | number | null | undefined): string {
  return String(value ?? '').replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

const CSS = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1f2328;background:#f6f8fa}
header{background:#24292f;color:#fff;padding:.6em 1.2em;display:flex;gap:1.2em;align-items:center}
header a{color:#fff;text-decoration:none}header .title{font-weight:600}
main{padding:1em 1.6em;max-width:1400px}
h1{font-size:1.4em;margin:.4em 0}h2{font-size:1.1em;margin-top:1.4em}
code{font:12px ui-monospace,monospace;background:#eaeef2;padding:0 .3em;border-radius:3px}
table{border-collapse:collapse;background:#fff;width:100%;margin:.5em 0}
th,td{border:1px solid #d0d7de;padding:.3em .5em;text-align:left;vertical-align:top}
th{background:#eaeef2;font-weight:600}
form.search{display:flex;flex-wrap:wrap;gap:.6em;align-items:flex-end;margin:.6em 0 1em}
form.search label{display:flex;flex-direction:column;font-size:12px;color:#57606a}
form.search input,form.search select{font:inherit;padding:.2em .4em}
.state{display:inline-block;padding:0 .4em;border-radius:3px;font-size:12px;background:#ddf4ff}
.state.ok{background:#dafbe1}.state.bad{background:#ffebe9;color:#a40e26;font-weight:600}.state.muted{background:#eaeef2}
.handler{margin-right:.6em;white-space:nowrap}
.muted{color:#57606a}.bad{color:#a40e26}.error{color:#a40e26;font-family:ui-monospace,monospace;font-size:12px}
.problems{color:#a40e26}.empty{color:#57606a;font-style:italic}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em}dl.facts dt{color:#57606a}dl.facts dd{margin:0}
ol.timeline{list-style:none;padding:0}
ol.timeline>li{display:flex;gap:1em;background:#fff;border:1px solid #d0d7de;border-left:4px solid #8c959f;margin:.4em 0;padding:.5em .8em}
ol.timeline>li.failed{border-left-color:#cf222e}ol.timeline>li.outcome-completed{border-left-color:#1a7f37}
.at{min-width:6em;color:#57606a;font-family:ui-monospace,monospace}.what{flex:1;min-width:0}
tr.call.failed td{background:#ffebe9}tr.call.failed .mark{color:#cf222e;font-weight:700}tr.call .mark{color:#1a7f37}
pre{white-space:pre-wrap;background:#f6f8fa;padding:.5em}
.notice{background:#dafbe1;border:1px solid #1a7f37;padding:.5em .8em;margin:.6em 0}
.confirm{background:#fff;border:1px solid #d0d7de;border-left:4px solid #bf8700;padding:.6em 1em;margin:.6em 0}
form.inline{display:inline;margin:0}
button.danger{color:#a40e26}
textarea{font:12px ui-monospace,monospace;padding:.3em}
progress{width:24em;height:1.2em}
`;

/** A workspace's pages of a deployment of many live under `<admin>/w/<id>` (src/admin/workspaces.ts). */
const WORKSPACE_ROOT = /^(.*)\/w\/([a-z0-9][a-z0-9-]*)$/;

function nav(basePath: string): string {
  const queues = `<a href="${escapeHtml(basePath)}">Queues</a>`;
  const deliveries = `<a href="${escapeHtml(`${basePath}/deliveries`)}">Deliveries</a>`;
  const reruns = `<a href="${escapeHtml(`${basePath}/reruns`)}">Reruns</a>`;
  const links = `${queues} · ${deliveries} · <a href="${escapeHtml(`${basePath}/waits`)}">Waits</a> · ${reruns}`;
  const ws = WORKSPACE_ROOT.exec(basePath);
  if (!ws) return links;
  const other = `<a href="${escapeHtml(`${ws[1] ?? ''}/deliveries`)}">other workspaces</a>`;
  return `<span class="workspace">workspace <strong>${escapeHtml(ws[2])}</strong></span> · ${links} · ${other}`;
}

/**
 * A whole page: `title`, the header linking the queue board, the deliveries and the waits, then `body` (already
 * escaped HTML). `refreshSeconds`: the browser reloads it that often (a batch's progress; the pages run no script).
 */
export function page(title: string, basePath: string, body: string, refreshSeconds?: number): string {
  const refresh = refreshSeconds ? `<meta http-equiv="refresh" content="${escapeHtml(refreshSeconds)}">` : '';
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${refresh}` +
    `<title>${escapeHtml(title)} · Switchyard</title><style>${CSS}</style></head><body>` +
    `<header><span class="title">Switchyard</span><nav>${nav(basePath)}</nav></header>` +
    `<main>${body}</main></body></html>`
  );
}

/** Problems with what was asked, in words. */
export function problemList(problems: readonly string[]): string {
  return `<ul class="problems">${problems.map((p) => `<li>${escapeHtml(p)}</li>`).join('')}</ul>`;
}
