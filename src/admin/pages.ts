import type { Queue } from 'bullmq';
import type { Hono } from 'hono';
import { mountDeliveries } from './deliveries.js';
import type { HistorySource } from './page.js';
import type { AdminRerun } from './rerun.js';
import { mountReruns } from './reruns.js';
import { mountWaits } from './waits.js';
import type { WaitOps } from './waits-actions.js';

/** What the deliveries, waits and reruns pages of one workspace read and act on (see AdminOptions). */
export interface WorkspacePages {
  readonly history?: HistorySource | undefined;
  readonly rerun?: AdminRerun | undefined;
  readonly waits?: WaitOps | undefined;
}

/** One workspace of a deployment of many, as the dashboard shows it. */
export interface AdminWorkspace extends WorkspacePages {
  readonly id: string;
  readonly queues: readonly Queue[];
}

/** The deliveries, waits and reruns pages under `root`, done in the name of the admin's one login (`user`). */
export function mountPages(app: Hono, root: string, ws: WorkspacePages, user: string): void {
  if (!ws.history) return;
  // Who acts, as the history and the batches record it: the one login the admin has (ADMIN_USER).
  const by = `admin:${user}`;
  mountDeliveries(app, root, ws.history, ws.rerun ? { deps: ws.rerun, by } : undefined);
  const actor = { who: user, via: 'admin' };
  mountWaits(app, root, ws.history, {
    ...(ws.waits ? { actions: { ops: ws.waits, actor } } : {}),
    ...(ws.rerun ? { loaded: ws.rerun.handlers } : {}),
  });
  mountReruns(app, root, ws.history, by);
}
