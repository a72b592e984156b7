import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, expect, it } from 'vitest';

/**
 * The README's "Testing a schedule" example, as written: its two blocks are
 * saved as `handlers/due-today.ts` and `test/due-today.test.ts` of a project of
 * their own, and that test file is imported here, so its tests run in this
 * file (`switchyard` and `switchyard/testing` resolve to this source tree, as
 * in every test; zod and vitest to this repository's).
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('\n### Testing a schedule: `testSchedule`\n'));
const blocks = [...section.matchAll(/```ts\n([\s\S]*?)```\n/g)].slice(0, 2).map((m) => m[1] as string);
const [schedule, test] = blocks;

const project = mkdtempSync(join(tmpdir(), 'sy-readme-schedule-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));
for (const d of ['handlers', 'test', 'node_modules']) mkdirSync(join(project, d));
for (const pkg of ['zod', 'vitest']) symlinkSync(join(ROOT, 'node_modules', pkg), join(project, 'node_modules', pkg), 'dir');
writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'readme-schedule', private: true, type: 'module' }));
writeFileSync(join(project, 'handlers', 'due-today.ts'), schedule ?? '');
writeFileSync(join(project, 'test', 'due-today.test.ts'), test ?? '');

it('the README holds the example: the schedule module, then its test', () => {
  expect(schedule).toMatch(/^\/\/ handlers\/due-today\.ts\n[\s\S]*defineSchedule\(/);
  expect(test).toMatch(
    /^\/\/ test\/due-today\.test\.ts\n[\s\S]*from 'switchyard\/testing';\nimport dueToday from '\.\.\/handlers\/due-today\.js';/,
  );
});

// Its describe() and it()s register here, as tests of this file.
await import(pathToFileURL(join(project, 'test', 'due-today.test.ts')).href);
