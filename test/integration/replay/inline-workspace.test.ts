/** `replay --inline` runs each handler with ctx.workspace of the workspace replayed (`default` without one). */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineHandler } from '../../../src/index.js';
import { createLogger } from '../../../src/log/logger.js';
import { inlineTarget, readInputs } from '../../../src/replay/index.js';
import { createSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';

const FIXTURES = fileURLToPath(new URL('../../../fixtures', import.meta.url));

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ burst: 1000 }).listen(0);
});
afterAll(async () => sandbox?.close());

const noter = defineHandler({
  id: 'ws-noter',
  on: ['conversation.closed'],
  async handle(event, ctx) {
    await ctx.api.notes.create(event.data.id, { body: `closed in ${ctx.workspace.id}` });
  },
});

async function notes(): Promise<string[]> {
  const res = await fetch(`${sandbox.url}/_sandbox/requests?method=POST&path=/conversations/38/notes`);
  return ((await res.json()) as { data: { body: { body: string } }[] }).data.map((r) => r.body.body);
}

describe('replay --inline and workspaces', () => {
  it('gives each run ctx.workspace of the option, `default` without it', async () => {
    const [item] = await readInputs([`${FIXTURES}/conversation.closed.json`], FIXTURES);
    for (const workspace of ['acme', undefined]) {
      const target = inlineTarget({
        handlers: [noter],
        api: { baseUrl: sandbox.baseUrl, token: 'sbx_full_acme', burst: 1000 },
        env: {},
        log: createLogger({ level: 'silent' }),
        ...(workspace ? { workspace } : {}),
      });
      expect(await target(item!)).toMatchObject({ kind: 'accepted' });
    }
    expect(await notes()).toEqual(['closed in acme', 'closed in default']);
  });
});
