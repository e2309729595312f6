// Ends every run with one plain line, "tests: N passed, N failed, N skipped", that CI and
// people can both read (vitest's own summary is a table).
//
// Under CI (CI set, and not "false" or "0"; .ci/run sets CI=true) a skipped test fails the run:
// a test that skips for a missing tool or a stale build must not pass CI as if it had run. Only
// a skip that declares it cannot run on this platform at all is allowed, by its note:
// `ctx.skip('not on this platform: <why>')`. A skip without a note (`it.skip`, `describe.runIf(false)`,
// `skipIf(true)`, `todo`) never is. Runs filtered by test name (-t) are left alone.
import type { Reporter, TestCase, TestModule, Vitest } from 'vitest/node';

export const PLATFORM_SKIP = 'not on this platform:';

export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0';
}

/** Why a skipped test is allowed to skip under CI, or undefined when it is not. */
export function allowedSkip(note: string | undefined): boolean {
  return note !== undefined && note.startsWith(PLATFORM_SKIP);
}

export default class SummaryReporter implements Reporter {
  private filteredByName = false;

  onInit(vitest: Vitest): void {
    this.filteredByName = Boolean(vitest.config.testNamePattern);
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    const unexpected: string[] = [];
    for (const mod of modules) {
      if (mod.state() === 'failed' && [...mod.children.allTests()].length === 0) failed++; // a file that failed to load
      for (const test of mod.children.allTests()) {
        const result = test.result();
        if (result.state === 'passed') passed++;
        else if (result.state === 'failed') failed++;
        else {
          skipped++;
          const note = result.state === 'skipped' ? result.note : undefined;
          if (!allowedSkip(note)) unexpected.push(describeSkip(mod, test, note));
        }
      }
    }
    if (inCi() && !this.filteredByName && unexpected.length > 0) {
      process.stdout.write(`\nunexpected skips under CI (a skip must run, or say "${PLATFORM_SKIP} ..."): ${unexpected.length}\n`);
      for (const line of unexpected) process.stdout.write(`  ${line}\n`);
      process.exitCode = 1;
    }
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}

function describeSkip(mod: TestModule, test: TestCase, note: string | undefined): string {
  const why = note ? note : test.options.mode === 'todo' ? 'todo' : 'skipped with no reason (it.skip, skipIf, runIf)';
  return `${mod.moduleId.replace(`${process.cwd()}/`, '')} > ${test.fullName}: ${why}`;
}
