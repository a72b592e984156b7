import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import type { Hono } from 'hono';

/**
 * The bull-board sub-app for `queues`, to be routed at `basePath`. The UI config
 * carries a title and the link to the deliveries view only: no configuration value (secrets, token, Redis URL) is
 * handed to the board, so none can appear in the page or its API answers.
 */
export function boardApp(queues: readonly Queue[], basePath: string, readOnly: boolean, deliveries = false): Hono {
  const serverAdapter = new HonoAdapter(serveStatic);
  serverAdapter.setBasePath(basePath);
  createBullBoard({
    queues: queues.map((q) => new BullMQAdapter(q, { readOnlyMode: readOnly })),
    serverAdapter,
    // miscLinks: links in the board's header; "Deliveries" opens the history view beside it
    // (a job's timeline: <basePath>/deliveries/job/<job id>, the id as the board shows it).
    options: {
      uiConfig: {
        boardTitle: 'Switchyard',
        ...(deliveries
          ? {
              miscLinks: [
                { text: 'Deliveries', url: `${basePath}/deliveries` },
                { text: 'Waits', url: `${basePath}/waits` },
              ],
            }
          : {}),
      },
    },
  });
  return serverAdapter.registerPlugin();
}
