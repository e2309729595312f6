// `npm run test:real-agentctl`: only the real-agentctl tests (the real agentctl daemon, built from
// the source GHOSTWATCH_REAL_AGENTCTL_SRC names, in a pid namespace of its own), never part of
// `npm test` (their files end in .real.ts, which the default config does not include).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/real-agentctl/**/*.real.ts'],
    testTimeout: 60_000,
    hookTimeout: 360_000,
    pool: 'forks',
  },
});
