import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

import { fileURLToPath } from 'node:url';

// Handler modules import 'switchyard'; in tests that is the source tree, so
// errors thrown by src/ and classes imported by handlers are the same classes.
// Each entry point of package.json "exports" maps to its source (subpaths first: a plain key also matches 'switchyard/…').
const alias = {
  'switchyard/api': fileURLToPath(new URL('./src/api/public.ts', import.meta.url)),
  'switchyard/sandbox': fileURLToPath(new URL('./src/sandbox/index.ts', import.meta.url)),
  'switchyard/testing': fileURLToPath(new URL('./src/testing/index.ts', import.meta.url)),
  switchyard: fileURLToPath(new URL('./src/index.ts', import.meta.url)),
};

/** One real redis-server per project run (test/support/global-redis.ts); unit tests need none. */
const REDIS = ['test/support/global-redis.ts'];

/**
 * A project: tests under test/<name>/ (see test/README.md for what goes where).
 * Inline projects do not inherit this file's options (vitest 4: `extends` is
 * off by default), so each one states the alias and its settings.
 */
function project(name: string, test: TestProjectInlineConfiguration['test'] = {}): TestProjectInlineConfiguration {
  return {
    resolve: { alias },
    test: {
      name,
      include: [`test/${name}/**/*.test.ts`],
      pool: 'forks',
      // Apart from the developer's shell and `.switchyard/` (test/support/hermetic.ts).
      setupFiles: ['test/support/hermetic.ts'],
      testTimeout: 30_000,
      hookTimeout: 60_000,
      ...test,
    },
  };
}

/**
 * Test files run at once in unit, integration and e2e. Most of them wait (on
 * Redis, child processes, timers) far more than they compute: one file at a
 * time, vitest's default on a 2-core machine (cores - 1), left the cores
 * mostly idle (test/README.md, "Suite time"). VITEST_MAX_WORKERS overrides it.
 */
const WORKERS = 2;

/**
 * Line coverage of src/ (V8), off unless asked for: `npm test` turns it on in
 * both of its vitest processes, each with a reportsDirectory of its own
 * (scripts/test.sh), and scripts/coverage-report.mjs merges the two
 * coverage-final.json files into the per-folder table it prints. Every module
 * of src/ counts, also one no test loads (0 %). In-process code only: the CLI
 * and servers that e2e and fault tests spawn as child processes are not seen.
 */
const COVERAGE = {
  provider: 'v8',
  include: ['src/**/*.ts'],
  reporter: ['json'],
  reportsDirectory: 'test-results/coverage/main',
  // A run with a failing test still reports what it covered.
  reportOnFailure: true,
} as const;

export default defineConfig({
  resolve: { alias },
  test: {
    maxWorkers: WORKERS,
    coverage: COVERAGE,
    projects: [
      project('unit'),
      project('integration', { globalSetup: REDIS }),
      project('e2e', { globalSetup: REDIS }),
      project('types', {
        include: [],
        typecheck: { enabled: true, only: true, include: ['test/types/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
      }),
      // The fault suite: real processes, real Redis, the sandbox. It takes minutes,
      // so `npm test` runs it in a vitest process of its own beside the other projects
      // (scripts/test.sh); in one run of every project it comes last (groupOrder). One
      // file at a time: the scenarios spawn receivers, workers and redis-servers and
      // would starve each other on a small machine.
      project('faults', {
        globalSetup: REDIS,
        fileParallelism: false,
        testTimeout: 240_000,
        sequence: { groupOrder: 1 },
      }),
    ],
  },
});
