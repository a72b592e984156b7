import { defineConfig } from 'vitest/config';

export default defineConfig({
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
