import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import type { Hono } from 'hono';

/** A queue on the board; `workspace`: shown as `<workspace> · <queue>` and grouped under it (a deployment of many). */
export interface BoardQueue {
  readonly queue: Queue;
  readonly workspace?: string | undefined;
}

/** A link in the board's header. */
export interface BoardLink {
  readonly text: string;
  readonly url: string;
}

/** The board's adapter of one queue: a workspace's queues named `<id>/<queue>` (unique on the board), shown `<id> · <queue>`. */
function adapter(q: BoardQueue, readOnly: boolean): BullMQAdapter {
  if (q.workspace === undefined) return new BullMQAdapter(q.queue, { readOnlyMode: readOnly });
  return new BullMQAdapter(q.queue, {
    readOnlyMode: readOnly,
    prefix: `${q.workspace}/`,
    delimiter: '/',
    displayName: `${q.workspace} · ${q.queue.name}`,
  });
}

/**
 * The bull-board sub-app for `queues`, to be routed at `basePath`. The UI config
 * carries a title and the links to the history views only: no configuration value (secrets, token, Redis URL) is
 * handed to the board, so none can appear in the page or its API answers.
 */
export function boardApp(queues: readonly BoardQueue[], basePath: string, readOnly: boolean, links: readonly BoardLink[] = []): Hono {
  const serverAdapter = new HonoAdapter(serveStatic);
  serverAdapter.setBasePath(basePath);
  createBullBoard({
    queues: queues.map((q) => adapter(q, readOnly)),
    serverAdapter,
    // miscLinks: links in the board's header, e.g. "Deliveries" opens the history view beside it
    // (a job's timeline: <basePath>/deliveries/job/<job id>, the id as the board shows it).
    options: { uiConfig: { boardTitle: 'Switchyard', ...(links.length ? { miscLinks: [...links] } : {}) } },
  });
  return serverAdapter.registerPlugin();
}

/** The header links to the deliveries and waits views under `root`. */
export const historyLinks = (root: string, label = ''): BoardLink[] => [
  { text: `${label}Deliveries`, url: `${root}/deliveries` },
  { text: `${label}Waits`, url: `${root}/waits` },
];
