// `npm run test:real-pi`: only the real-pi tests (real `pi` from npm in tmux against serve), never
// part of `npm test` (their files end in .real.ts, which the default config does not include).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/real-pi/**/*.real.ts'],
    testTimeout: 60_000,
    hookTimeout: 360_000,
    pool: 'forks',
  },
});
