/**
 * The query box of /admin/deliveries on a real pipeline (kept bodies): the CLI's `--where` expressions, several
 * at once, beside the filters; what is wrong with one said on the page in words, with the did-you-mean.
 */
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountAdmin } from '../../../src/admin/index.js';
import { readTrace } from '../../../src/history/read.js';
import { messageBody } from '../../support/events.js';
import { sandboxCall, startPipeline, type Pipeline } from '../../support/pipeline.js';
import { deliver, waitFor } from '../../support/service.js';

const HANDLERS = fileURLToPath(new URL('../../support/handlers/rerun-batch', import.meta.url));
const admin = { user: 'ops', password: 'pw-admin-where-41d0' };
const auth = { Authorization: `Basic ${Buffer.from(`${admin.user}:${admin.password}`).toString('base64')}` };
const keyOf = (body: string) => (JSON.parse(body) as { id: string }).id;

describe('the query box of /admin/deliveries', () => {
  let p: Pipeline;
  let app: Hono;
  let conv: number;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    p = await startPipeline({ handlersDir: HANDLERS });
    app = new Hono();
    mountAdmin(app, { queues: [], admin, history: { redis: p.redis, prefix: p.prefix } });
    conv = ((await sandboxCall(p, 'GET', '/conversations')).json.data as { id: number }[])[0]?.id as number;
    for (const text of ['refund request please', 'where is my order', 'REFUND now']) {
      const body = messageBody('message.received', conv, text);
      expect((await deliver(p.receiverUrl, body)).status).toBe(202);
      keys[text] = keyOf(body);
    }
    for (const key of Object.values(keys))
      await waitFor(
        async () => ((await readTrace(p.redis, p.prefix, key))?.handlers['rerun-note'] === 'completed' ? true : null),
        20_000,
        50,
      );
  }, 60_000);
  afterAll(async () => p?.close());

  const search = async (where: string, more: Record<string, string> = {}) => {
    const res = await app.request(`/admin/deliveries?${new URLSearchParams({ where, ...more }).toString()}`, { headers: auth });
    const html = await res.text();
    return { status: res.status, html, keys: [...html.matchAll(/class="key" href="[^"]+">([^<]+)</g)].map((m) => m[1]) };
  };

  it('finds deliveries by what they carried: contains (any case), equals, several expressions by space or line', async () => {
    expect((await search('data.body~refund')).keys).toEqual([keys['REFUND now'], keys['refund request please']]);
    expect((await search('data.body~"refund request"')).keys).toEqual([keys['refund request please']]);
    expect((await search(`data.body~refund\ndata.body!="REFUND now"`)).keys).toEqual([keys['refund request please']]);
    expect((await search(`data.conversation_id=${conv} data.body~order`)).keys).toEqual([keys['where is my order']]);
    expect((await search('data.conversation_id=987654321')).keys).toEqual([]);
    const r = await search('data.body~refund', { event: 'message.received', outcome: 'completed' });
    expect(r.keys).toHaveLength(2);
    expect(r.html).toMatch(/The query box read \d+ deliveries of the history, all of them\./);
    // The box keeps what was typed.
    expect(r.html).toContain('>data.body~refund</textarea>');
  });

  it('says what is wrong with each expression, in words, with a did-you-mean; no list', async () => {
    const typo = await search('data.bdy~refund data.conversation_id=abc');
    expect(typo.status).toBe(400);
    expect(typo.keys).toEqual([]);
    expect(typo.html).toContain(
      'where &#34;data.bdy~refund&#34;: no event of the catalogue has a field &#34;data.bdy&#34;; did you mean data.body?',
    );
    expect(typo.html).toContain('where &#34;data.conversation_id=abc&#34;: data.conversation_id is a number: expected a number after =');
    const noOp = await search('data.body');
    expect(noOp.html).toContain('no operator; expected &#60;path&#62;&#60;op&#62;&#60;value&#62;');
    const quote = await search('data.body~"refund');
    expect(quote.html).toContain('where: line 1: a quote (&#34;) is not closed');
    const event = await search('data.body~x', { event: 'message.recieved' });
    expect(event.html).toContain('event: no event &#34;message.recieved&#34; in the catalogue; did you mean &#34;message.received&#34;?');
    expect(event.html).not.toMatch(/at .*\.ts:\d+/);
  });
});
