/**
 * `POST /leads` takes no Idempotency-Key (API spec), so a lead write is sent
 * once and never repeated, even when the caller passes a key: against the real
 * sandbox with a latency fault longer than the client's timeout.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OutcomeUnknownError, TimeoutError, type ApiClient, type CallEvent } from '../../../src/api/index.js';
import { startSandbox, type SandboxHarness } from '../../support/sandbox.js';

interface LoggedCall {
  method: string;
  path: string;
  status: number;
  idempotency_key: string | null;
  body: { name?: string };
}

let h: SandboxHarness;
beforeAll(async () => {
  h = await startSandbox();
});
beforeEach(async () => {
  await h.hook('POST', '/reset');
});
afterEach(async () => {
  await h.hook('DELETE', '/faults');
});
afterAll(async () => {
  await h?.close();
});

/**
 * The sandbox's POST /leads calls for the lead `name`, after giving any repeat
 * time to land (each call waits out the fault's latency before it is handled and logged).
 */
async function leadWrites(name: string): Promise<LoggedCall[]> {
  await new Promise((r) => setTimeout(r, 1_000));
  const calls = await h.hook<LoggedCall[]>('GET', '/requests?method=POST&path=/leads');
  return calls.filter((c) => c.body.name === name);
}

describe('leads.create under a timeout', () => {
  it('with a caller-supplied idempotencyKey: sent once without the header, one lead created, OutcomeUnknownError', async () => {
    const [bob] = await h.client().contacts.list({ search: 'Bob' }).toArray();
    await h.hook('POST', '/faults', { path: '/leads', method: 'POST', latency_ms: 600 });
    const events: CallEvent[] = [];
    const warnings: string[] = [];
    const api: ApiClient = h.client({
      timeoutMs: 300,
      retry: { maxAttempts: 4, baseMs: 10 },
      onCall: (e) => events.push(e),
      logger: { debug: () => undefined, warn: (_o, msg) => warnings.push(msg) },
    });
    const name = `Timeout lead ${Date.now()}`;
    // A JavaScript handler (or a cast) can still pass a key; TypeScript refuses it.
    const options = { idempotencyKey: 'caller-key-1' } as Parameters<ApiClient['leads']['create']>[1];
    const err = await api.leads.create({ contact_id: bob!.id, name }, options).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(err).toMatchObject({ code: 'outcome_unknown', retryable: false });
    expect((err as Error).cause).toBeInstanceOf(TimeoutError);
    expect(events.map((e) => [e.op, e.attempt, e.willRetry])).toEqual([['leads.create', 1, false]]);
    expect(warnings).toContainEqual(expect.stringMatching(/^leads\.create: idempotencyKey ignored; the endpoint takes no Idempotency-Key/));

    const calls = await leadWrites(name);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ status: 201, idempotency_key: null });
    const leads = await h.client().leads.list({ contact_id: bob!.id }).toArray();
    expect(leads.filter((l) => l.name === name)).toHaveLength(1);
  });

  it('without a key: the same, one lead and OutcomeUnknownError', async () => {
    const [bob] = await h.client().contacts.list({ search: 'Bob' }).toArray();
    await h.hook('POST', '/faults', { path: '/leads', method: 'POST', latency_ms: 600 });
    const api = h.client({ timeoutMs: 300, retry: { maxAttempts: 4, baseMs: 10 } });
    const name = `Timeout lead plain ${Date.now()}`;
    const err = await api.leads.create({ contact_id: bob!.id, name }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(await leadWrites(name)).toHaveLength(1);
    expect((await h.client().leads.list({ contact_id: bob!.id }).toArray()).filter((l) => l.name === name)).toHaveLength(1);
  });
});
