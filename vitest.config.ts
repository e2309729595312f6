import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Real child processes and sockets: separate processes keep one file's children from another's.
    pool: 'forks',
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
