import { describe, expect, it } from 'vitest';
import { createSandbox } from '../../../src/sandbox/index.js';

describe('POST /_sandbox/events/redeliver', () => {
  it('sends failed events again with the same id and bytes, signed; answers how many were queued', async () => {
    let up = false;
    const seen: { body: string; signature: string | null }[] = [];
    const fetch = (async (_url: string, init: RequestInit) => {
      if (!up) throw new Error('connection refused');
      seen.push({
        body: Buffer.from(init.body as Uint8Array).toString('utf8'),
        signature: new Headers(init.headers).get('x-service-signature'),
      });
      return new Response(null, { status: 202 });
    }) as typeof globalThis.fetch;
    const sandbox = createSandbox({
      webhookUrl: 'http://receiver.test/webhooks',
      secret: 's',
      fetch,
      retry: { baseMs: 1, maxMs: 1, maxAttempts: 2 },
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
    expect((await hook('/inbound', { contact: { name: 'Owl' }, channel_id: ws?.channels[0]?.id, body: 'hi' })).status).toBe(201);
    await sandbox.emitter.idle();
    expect(sandbox.emitter.deliveries().every((d) => d.state === 'failed')).toBe(true);
    const lost = sandbox.emitter.events();

    up = true;
    const r = await hook('/events/redeliver', {});
    expect(((await r.json()) as { data: { queued: number } }).data.queued).toBe(lost.length);
    await sandbox.emitter.idle();
    expect(sandbox.emitter.deliveries().map((d) => d.state)).toEqual(lost.map(() => 'delivered'));
    expect(seen.map((s) => s.body)).toEqual(lost.map((e) => JSON.stringify(e)));
    expect(seen.every((s) => s.signature?.startsWith('sha256='))).toBe(true);
    // Nothing failed is left: a second call queues nothing; ids pick delivered ones too.
    expect(((await (await hook('/events/redeliver', {})).json()) as { data: { queued: number } }).data.queued).toBe(0);
    expect(((await (await hook('/events/redeliver', { ids: [lost[0]?.id] })).json()) as { data: { queued: number } }).data.queued).toBe(1);
    await sandbox.emitter.idle();
  });
});
