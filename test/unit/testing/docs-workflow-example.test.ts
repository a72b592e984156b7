import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import type { Handler } from '../../../src/index.js';
import { createEvent, testHandler } from '../../../src/testing/index.js';

/**
 * docs/handlers.md's workflow example, as written: the handler of "Workflows
 * over time" and the test of "Testing a workflow" are saved as
 * `handlers/first-reply-sla.ts` and `test/first-reply-sla.test.ts` of a
 * project of their own, and that test file is imported here, so its tests
 * (reply in time, no reply, closed) run in this file (`switchyard` and
 * `switchyard/testing` resolve to this source tree; zod and vitest to this
 * repository's).
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const doc = readFileSync(join(ROOT, 'docs', 'handlers.md'), 'utf8');
const blockAfter = (heading: string, first: string): string | undefined => {
  const section = doc.slice(doc.indexOf(heading));
  return [...section.matchAll(/```ts\n([\s\S]*?)```\n/g)].map((m) => m[1] as string).find((b) => b.startsWith(first));
};
const handler = blockAfter('\n### Workflows over time\n', '// handlers/first-reply-sla.ts\n');
const test = blockAfter('\n**Testing a workflow.**', '// test/first-reply-sla.test.ts\n');

const project = mkdtempSync(join(tmpdir(), 'sy-docs-workflow-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));
for (const d of ['handlers', 'test', 'node_modules']) mkdirSync(join(project, d));
for (const pkg of ['zod', 'vitest']) symlinkSync(join(ROOT, 'node_modules', pkg), join(project, 'node_modules', pkg), 'dir');
writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'docs-workflow', private: true, type: 'module' }));
writeFileSync(join(project, 'handlers', 'first-reply-sla.ts'), handler ?? '');
writeFileSync(join(project, 'test', 'first-reply-sla.test.ts'), test ?? '');

it('docs/handlers.md holds the example: the handler, then its test', () => {
  expect(handler).toMatch(/defineHandler\(\{\n {2}id: 'first-reply-sla',[\s\S]*ctx\.waitForEvent\('reply'/);
  expect(test).toMatch(/from 'switchyard\/testing';\nimport sla from '\.\.\/handlers\/first-reply-sla\.js';/);
  expect(test?.match(/\n {2}it\(/g)).toHaveLength(3);
});

// Its describe() and it()s register here, as tests of this file.
await import(pathToFileURL(join(project, 'test', 'first-reply-sla.test.ts')).href);

// The second example of "Workflows over time": the lead nurture (a keyed where, a typed state).
const nurtureCode = blockAfter('\n### Workflows over time\n', '// handlers/lead-nurture.ts\n');
writeFileSync(join(project, 'handlers', 'lead-nurture.ts'), nurtureCode ?? '');

it('the lead nurture example counts its nudges in a typed state and takes only its contact\'s "Engaged"', async () => {
  expect(nurtureCode).toContain(`match: { on: 'contact', where: (e) => e.data.lifecycle.name === 'Engaged' }`);
  const { default: nurture } = (await import(pathToFileURL(join(project, 'handlers', 'lead-nurture.ts')).href)) as { default: Handler };
  const lead = createEvent('lead.created', { data: { id: 5, contact_id: 35 } });
  const stage = (contact: number, name: string) => ({
    event: createEvent('contact.lifecycle_changed', {
      data: { contact_id: contact, lifecycle: { id: 6, name, role: null, outcome: null } },
    }),
    after: '4d',
  });
  const answered = await testHandler(nurture, lead, {
    state: { nudges: 1 },
    events: [stage(99, 'Engaged'), stage(35, 'Lead'), stage(35, 'Engaged')],
  });
  expect(answered.outcome).toBe('completed');
  expect(answered.state).toEqual({ nudges: 2 });
  expect(answered.waits.map((w) => w.outcome)).toEqual(['slept', 'matched']);
  expect(answered.waits[1]?.event?.data).toMatchObject({ contact_id: 35, lifecycle: { name: 'Engaged' } });
  const silent = await testHandler(nurture, lead, { events: [stage(99, 'Engaged')] });
  expect(silent.waits.map((w) => w.outcome)).toEqual(['slept', 'timed_out']);
  expect(silent.logs.some((l) => JSON.stringify(l).includes('no answer to the nudge'))).toBe(true);
});
