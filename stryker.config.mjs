// Mutation testing (`npm run mutate`): Stryker changes src/core and src/engine one small behaviour at
// a time and runs the tests that cover each change; a mutant that no test notices "survives".
// scripts/mutate.mjs runs it once per folder (GHOSTWATCH_MUTATE_SCOPE = core, engine: the folder
// mutated and its tests, see vitest.mutate.config.ts) and prints the score of each against its
// floor (core >= 85 %, engine >= 75 %) and the surviving mutants.
const scope = process.env.GHOSTWATCH_MUTATE_SCOPE ?? 'core';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts', related: false },
  coverageAnalysis: 'perTest',
  mutate: [`src/${scope}/**/*.ts`],
  // Two cores: one test process by default; `npm run mutate -- --concurrency 2` on an idle machine.
  concurrency: 1,
  // Reuse the results of the last run for mutants whose code and tests did not change.
  incremental: true,
  incrementalFile: `reports/mutation/${scope}-incremental.json`,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: `reports/mutation/${scope}.json` },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  thresholds: { high: 85, low: 75, break: null },
  // dist/ stays: a few engine tests run the built CLI (scripts/mutate.mjs builds first).
  ignorePatterns: ['reports', 'screenshots', 'bench', '.stryker-tmp'],
  timeoutMS: 10_000,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
