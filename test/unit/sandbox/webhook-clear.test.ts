import { describe, expect, it } from 'vitest';
import { createSandbox } from '../../../src/sandbox/index.js';

/** A sandbox whose webhook endpoint is down (every POST is refused) and a hook helper. */
function downSandbox() {
  const calls: string[] = [];
  const fetch = (async (url: string) => {
    calls.push(url);
    throw new Error('connection refused');
  }) as typeof globalThis.fetch;
  // Long back-off: the first event sits between attempts when the URL is cleared.
  const sandbox = createSandbox({
    webhookUrl: 'http://receiver.test/webhooks',
    secret: 's',
    fetch,
    retry: { baseMs: 60_000, maxMs: 60_000, maxAttempts: 5 },
  });
  const hook = (path: string, body: unknown) =>
    sandbox.app.fetch(
      new Request(`http://sandbox/_sandbox${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    );
  return { sandbox, hook, calls };
}

describe('POST /_sandbox/webhook {"url": null} while events are retried', () => {
  it('marks the retried event and those queued behind it not_sent, attempts nothing further, and redeliver picks them up', async () => {
    const { sandbox, hook, calls } = downSandbox();
    const ws = (
      (await (await sandbox.app.fetch(new Request('http://sandbox/_sandbox/workspaces'))).json()) as {
        data: { channels: { id: number }[] }[];
      }
    ).data[0];
    expect((await hook('/inbound', { contact: { name: 'Owl' }, channel_id: ws?.channels[0]?.id, body: 'hi' })).status).toBe(201);
    await new Promise((r) => setTimeout(r, 20));
    const before = sandbox.emitter.deliveries();
    expect(before.length).toBeGreaterThan(1);
    expect(before[0]).toMatchObject({ state: 'pending', attempts: 1 });
    expect(before[0]?.next_attempt_at).not.toBeNull();

    expect((await hook('/webhook', { url: null })).status).toBe(200);
    const after = sandbox.emitter.deliveries();
    expect(after.map((d) => d.state)).toEqual(before.map(() => 'not_sent'));
    expect(after.every((d) => d.next_attempt_at === null)).toBe(true);
    expect(after[0]).toMatchObject({ attempts: 1, last_error: 'connection refused' });
    expect(after.slice(1).every((d) => d.attempts === 0)).toBe(true);
    expect(calls).toHaveLength(1);
    // Resolves at once: no retry is left waiting for its back-off.
    await sandbox.emitter.idle();

    // The reconcile recipe: point the webhook back and redeliver what was not sent.
    expect((await hook('/webhook', { url: 'http://receiver.test/webhooks', secret: 's' })).status).toBe(200);
    expect(((await (await hook('/events/redeliver', {})).json()) as { data: { queued: number } }).data.queued).toBe(before.length);
    await sandbox.emitter.close();
  });

  it('an attempt in flight when the URL is cleared ends not_sent and leaves the events queued later alone', async () => {
    let release: () => void = () => undefined;
    const urls: string[] = [];
    const fetch = (async (url: string) => {
      urls.push(url);
      if (urls.length === 1) {
        await new Promise<void>((r) => {
          release = r;
        });
        return new Response(null, { status: 503 });
      }
      return new Response(null, { status: 202 });
    }) as typeof globalThis.fetch;
    const sandbox = createSandbox({
      webhookUrl: 'http://receiver.test/webhooks',
      secret: 's',
      fetch,
      retry: { baseMs: 1, maxMs: 1, maxAttempts: 1 },
    });
    const hook = (path: string, body: unknown) =>
      sandbox.app.fetch(
        new Request(`http://sandbox/_sandbox${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      );
    const ws = (
      (await (await sandbox.app.fetch(new Request('http://sandbox/_sandbox/workspaces'))).json()) as {
        data: { channels: { id: number }[] }[];
      }
    ).data[0];
    await hook('/inbound', { contact: { name: 'Owl' }, channel_id: ws?.channels[0]?.id, body: 'hi' });
    const cleared = sandbox.emitter.deliveries().length;
    await new Promise((r) => setTimeout(r, 10));
    expect(urls).toHaveLength(1);
    await hook('/webhook', { url: null });
    // A new target and new events while the old attempt is still out.
    await hook('/webhook', { url: 'http://receiver.test/other', secret: 's' });
    await hook('/inbound', { contact: { name: 'Emu' }, channel_id: ws?.channels[0]?.id, body: 'yo' });
    release();
    await sandbox.emitter.idle();
    const states = sandbox.emitter.deliveries().map((d) => d.state);
    expect(states.slice(0, cleared)).toEqual(Array(cleared).fill('not_sent'));
    expect(states.slice(cleared)).toEqual(Array(states.length - cleared).fill('delivered'));
    expect(urls.slice(1)).toEqual(Array(states.length - cleared).fill('http://receiver.test/other'));
    await sandbox.emitter.close();
  });
});
