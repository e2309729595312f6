// `npm run test:real-claude`: only the real-Claude tests (the real Claude Code from npm in tmux,
// offline against a fake Messages API, read by the built CLI), never part of `npm test` (their
// files end in .real.ts, which the default config does not include).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/real-claude/**/*.real.ts'],
    testTimeout: 90_000,
    hookTimeout: 660_000,
    pool: 'forks',
  },
});
