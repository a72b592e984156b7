import { describe, expect, it } from 'vitest';
import { defineHandler } from '../../../src/handler/define.js';
import type { StoredDelivery } from '../../../src/queue/delivery.js';
import type { HandlerJobData } from '../../../src/queue/jobs.js';
import type { QueuedJob } from '../../../src/queue/order.js';
import { dispatch, type FanOutPorts } from '../../../src/worker/dispatcher.js';
import { eventBody } from '../../support/events.js';

const handler = defineHandler({
  id: 'note',
  on: ['message.received', 'conversation.opened', 'conversation.assigned'],
  priority: 'high',
  handle: async () => {},
});
const message = {
  id: 9,
  conversation_id: 2,
  type: 'message',
  direction: 'inbound',
  sender_type: 'contact',
  user_id: null,
  body: 'hi',
  content_type: 'text',
  status: null,
  created_at: '2025-03-04T10:00:00Z',
};

function delivery(key: string, event: string, data: unknown, source?: 'reconcile'): StoredDelivery {
  return {
    key,
    name: event,
    receivedAt: '2025-03-04T10:00:01Z',
    secretIndex: 0,
    headers: {},
    body: eventBody(event, data as object, { id: key, createdMs: Date.parse('2025-03-04T10:00:00Z') }),
    ...(source ? { source } : {}),
  };
}

/** Ports that keep added jobs and change claims in memory. */
function ports(): FanOutPorts & { jobs: QueuedJob[]; claims: Map<string, string> } {
  const jobs: QueuedJob[] = [];
  const claims = new Map<string, string>();
  return {
    jobs,
    claims,
    flow: {
      addJobs: async (js) => {
        jobs.push(...js);
      },
      enqueue: async () => 'add',
      fold: async () => ({ kind: 'folded' as const, jobId: '', delayMs: 0 }),
    },
    check: async (_event, _delivery, change) => {
      if (change === null) return { claimed: true };
      if (!claims.has(change.key)) claims.set(change.key, change.claimant.deliveryKey);
      return { claimed: claims.get(change.key) === change.claimant.deliveryKey };
    },
  };
}

describe('dispatch: change-level dedupe', () => {
  it('the first delivery of a change claims it and fans out; another delivery of the same change fans out to nothing', async () => {
    const p = ports();
    const first = await dispatch(delivery('rc:message.received:9', 'message.received', message, 'reconcile'), [handler], p);
    expect(first).toMatchObject({ handlers: ['note'] });
    expect(first.duplicateChange).toBeUndefined();
    expect((p.jobs[0]?.data as HandlerJobData).source).toBe('reconcile');
    // Catch-up work: the low queue, whatever the handler's priority.
    expect(p.jobs[0]?.priority).toBe('low');
    const late = await dispatch(delivery('evt_late', 'message.received', message), [handler], p);
    expect(late).toEqual({ handlers: [], placed: {}, duplicateChange: 'message.received:9' });
    expect(p.jobs).toHaveLength(1);
  });

  it('the same delivery dispatched again (a retried events job) still fans out: its job ids make it a repeat', async () => {
    const p = ports();
    await dispatch(delivery('evt_1', 'message.received', message), [handler], p);
    const again = await dispatch(delivery('evt_1', 'message.received', message), [handler], p);
    expect(again.duplicateChange).toBeUndefined();
    expect(p.jobs.map((j) => j.opts.jobId)).toEqual([p.jobs[0]?.opts.jobId, p.jobs[0]?.opts.jobId]);
    expect((p.jobs[0]?.data as HandlerJobData).source).toBeUndefined();
    expect(p.jobs[0]?.priority).toBe('high');
  });

  it('an event without a change key is dispatched without a claim', async () => {
    const p = ports();
    const conv = {
      id: 2,
      contact_id: 1,
      channel: { id: 1, name: 'WA', type: 'whatsapp' },
      status: 'open',
      subject: null,
      assignee: null,
      last_message_at: '2025-03-04T10:00:00Z',
      closed_at: null,
      created_at: '2025-03-04T09:00:00Z',
    };
    // An assignment to nobody (assignee null) names no change: nothing to claim.
    await dispatch(delivery('evt_a', 'conversation.assigned', conv), [handler], p);
    await dispatch(delivery('evt_b', 'conversation.assigned', conv), [handler], p);
    expect(p.claims.size).toBe(0);
    expect(p.jobs).toHaveLength(2);
  });
});
