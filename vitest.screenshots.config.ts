// `npm run screenshots`: only the screenshot writer, never part of `npm test`.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Every screen in one test: on a loaded machine that takes more than vitest's default 5 s.
  test: { include: ['test/support/write-screenshots.tsx'], pool: 'forks', testTimeout: 120_000 },
});
