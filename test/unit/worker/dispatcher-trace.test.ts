import { describe, expect, it } from 'vitest';
import { defineHandler } from '../../../src/handler/define.js';
import type { StoredDelivery } from '../../../src/queue/delivery.js';
import type { QueuedJob } from '../../../src/queue/order.js';
import { dispatch, type FanOutPorts } from '../../../src/worker/dispatcher.js';
import { eventBody, messageData } from '../../support/events.js';

const TP = '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01';
const handlers = ['a', 'b'].map((id) => defineHandler({ id, on: ['message.received'], handle: async () => {} }));
const message = messageData('message.received', 2, 'hi', Date.parse('2026-01-01T00:00:00Z'));

function delivery(traceparent?: string): StoredDelivery {
  return {
    key: 'evt_t',
    name: 'message.received',
    receivedAt: '2026-01-01T00:00:01Z',
    secretIndex: 0,
    headers: {},
    body: eventBody('message.received', message, { id: 'evt_t' }),
    ...(traceparent ? { traceparent } : {}),
  };
}

/** Ports that keep the handler jobs fan-out adds in memory. */
function ports(): FanOutPorts & { jobs: QueuedJob[] } {
  const jobs: QueuedJob[] = [];
  return {
    jobs,
    flow: {
      addJobs: async (js) => {
        jobs.push(...js);
      },
      enqueue: async () => 'add',
      fold: async () => ({ kind: 'folded' as const, jobId: '', delayMs: 0 }),
    },
  };
}

describe('dispatch: the trace context travels in the delivery', () => {
  it("each handler job carries the trace context the delivery brings to fan-out (its fan-out scope's), with no tracing import", async () => {
    const p = ports();
    await dispatch(delivery(TP), handlers, p);
    expect(p.jobs).toHaveLength(2);
    expect(p.jobs.map((j) => j.data.traceparent)).toEqual([TP, TP]);
  });

  it('a delivery without one gives its jobs none', async () => {
    const p = ports();
    await dispatch(delivery(), handlers, p);
    expect(p.jobs).toHaveLength(2);
    for (const j of p.jobs) expect(j.data).not.toHaveProperty('traceparent');
  });
});
