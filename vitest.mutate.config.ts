// `npm run mutate`: the tests Stryker runs against each mutant. GHOSTWATCH_MUTATE_SCOPE (set by
// scripts/mutate.mjs) picks the folder under mutation and so the tests: src/core is judged by
// test/core alone (two seconds a run, which keeps its ~400 static mutants, each needing every test,
// feasible), src/engine by test/engine. The CLI, UI and end-to-end files run the built dist/, which
// carries no mutant, and would only slow each run.
import { defineConfig } from 'vitest/config';

const scope = process.env.GHOSTWATCH_MUTATE_SCOPE ?? 'core';

export default defineConfig({
  test: {
    include: [`test/${scope}/**/*.test.ts`],
    // The purity test reads src/core's text, which Stryker's instrumentation rewrites (it reaches
    // for the global object): it would fail every run and can kill no mutant.
    exclude: ['test/core/purity.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
  },
});
