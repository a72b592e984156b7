import { defineConfig } from 'vitest/config';

import { fileURLToPath } from 'node:url';

export default defineConfig({
  // Handler modules import 'switchyard'; in tests that is the source tree, so
  // errors thrown by src/ and classes imported by handlers are the same classes.
  // Each entry point of package.json "exports" maps to its source (subpaths first: a plain key also matches 'switchyard/…').
  resolve: {
    alias: {
      'switchyard/api': fileURLToPath(new URL('./src/api/public.ts', import.meta.url)),
      'switchyard/sandbox': fileURLToPath(new URL('./src/sandbox/index.ts', import.meta.url)),
      'switchyard/testing': fileURLToPath(new URL('./src/testing/index.ts', import.meta.url)),
      switchyard: fileURLToPath(new URL('./src/index.ts', import.meta.url)),
    },
  },
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/faults/**', 'node_modules/**'],
    globalSetup: ['test/support/global-redis.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
  },
});
