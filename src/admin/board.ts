import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { HonoAdapter } from '@bull-board/hono';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Queue } from 'bullmq';
import type { Hono } from 'hono';

/**
 * The bull-board sub-app for `queues`, to be routed at `basePath`. The UI config
 * carries a title only: no configuration value (secrets, token, Redis URL) is
 * handed to the board, so none can appear in the page or its API answers.
 */
export function boardApp(queues: readonly Queue[], basePath: string, readOnly: boolean): Hono {
  const serverAdapter = new HonoAdapter(serveStatic);
  serverAdapter.setBasePath(basePath);
  createBullBoard({
    queues: queues.map((q) => new BullMQAdapter(q, { readOnlyMode: readOnly })),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Switchyard' } },
  });
  return serverAdapter.registerPlugin();
}
