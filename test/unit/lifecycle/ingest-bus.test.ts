import { describe, expect, it } from 'vitest';
import { IngestBus } from '../../../src/lifecycle/ingest-bus.js';
import type { IngestEvent, PumpFacts, RequestFacts, StoringFacts } from '../../../src/lifecycle/ingest-events.js';

const request: RequestFacts = { method: 'POST', path: '/webhooks', route: '/webhooks' };
const delivery: StoringFacts = { key: 'evt_1', name: 'lead.won', receivedAt: '', bytes: new Uint8Array(), headers: {} };
const pumped = (key: string): PumpFacts => ({ key, name: null, jobId: key, queue: 'events', batch: 2, traceparent: undefined });

describe('ingest bus', () => {
  it('with no subscriber: not active, and receipt, store and pump run their work directly with no trace context', async () => {
    const bus = new IngestBus();
    expect(bus.active).toBe(false);
    expect(bus.wants('stored')).toBe(false);
    expect(await bus.receipt(request, async () => 'answer')).toBe('answer');
    expect(await bus.store(delivery, async (tp) => (tp === undefined ? 'accepted' : 'duplicate'))).toBe('accepted');
    expect(await bus.pump([pumped('a'), pumped('b')], async (carried) => carried)).toEqual([undefined, undefined]);
  });

  it('an opening event runs its work in every scope (the first subscriber outermost) and hands it the innermost trace context', async () => {
    const order: string[] = [];
    const events: IngestEvent[] = [];
    const bus = new IngestBus()
      .subscribe({
        storing: () => ({ run: (fn) => (order.push('outer'), fn()), traceparent: 'tp-outer' }),
        stored: (e) => void events.push(e),
      })
      .subscribe({
        storing: () => {
          throw new Error('a broken observer');
        },
      })
      .subscribe({ storing: () => ({ run: (fn) => (order.push('inner'), fn()), traceparent: 'tp-inner' }) })
      .subscribe({ storing: () => ({ run: (fn) => (order.push('no context'), fn()) }) });
    const outcome = await bus.store(delivery, async (tp) => {
      order.push(`put ${tp}`);
      return 'spooled' as const;
    });
    expect(outcome).toBe('spooled');
    expect(order).toEqual(['outer', 'inner', 'no context', 'put tp-inner']);
    expect(events).toEqual([{ type: 'stored', delivery, ok: true, outcome: 'spooled' }]);
  });

  it('a write, a route or a batch that throws is ended with its error, and the error goes on to the caller', async () => {
    const events: IngestEvent[] = [];
    const record = (e: IngestEvent) => void events.push(e);
    const bus = new IngestBus().subscribe({ answered: record, stored: record, pumped: record });
    const boom = new Error('boom');
    await expect(bus.store(delivery, async () => Promise.reject(boom))).rejects.toBe(boom);
    await expect(bus.receipt(request, async () => Promise.reject(boom))).rejects.toBe(boom);
    await expect(bus.pump([pumped('a'), pumped('b')], async () => Promise.reject(boom))).rejects.toBe(boom);
    expect(events).toEqual([
      { type: 'stored', delivery, ok: false, error: boom },
      { type: 'answered', request, ok: false, error: boom },
      { type: 'pumped', delivery: pumped('a'), ok: false, error: boom },
      { type: 'pumped', delivery: pumped('b'), ok: false, error: boom },
    ]);
  });

  it('a pump batch: pumping for each delivery (each job given its own trace context, in order), then pumped for each', async () => {
    const seen: string[] = [];
    let n = 0;
    const bus = new IngestBus().subscribe({
      pumping: ({ delivery: d }) => (seen.push(`pumping ${d.key}`), { run: (fn) => fn(), traceparent: `tp-${d.key}-${++n}` }),
      pumped: (e) => void seen.push(`pumped ${e.delivery.key} ${e.ok}`),
    });
    const carried = await bus.pump([pumped('a'), pumped('b')], async (tps) => (seen.push('addBulk'), tps));
    expect(carried).toEqual(['tp-a-1', 'tp-b-2']);
    expect(seen).toEqual(['pumping a', 'pumping b', 'addBulk', 'pumped a true', 'pumped b true']);
  });
});
