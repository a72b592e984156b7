/** Test handler: logs which of Switchyard's secret variables its process still has (there should be none), and its own setting. */
import { z } from 'zod';
import { defineHandler } from 'switchyard';

const WATCHED = ['WEBHOOK_SECRETS', 'WORKSPACE_API_TOKEN', 'ADMIN_PASSWORD', 'REDIS_URL', 'PROBE_OWN_SETTING'];

export default defineHandler({
  id: 'process-env-probe',
  on: ['message.received'],
  settings: z.object({ PROBE_OWN_SETTING: z.string() }),
  handle(_event, ctx) {
    const present = WATCHED.filter((name) => process.env[name] !== undefined);
    ctx.log.warn({ present: present.join(','), setting: ctx.settings.PROBE_OWN_SETTING }, 'process-env-probe');
  },
});
