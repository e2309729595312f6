// Tests that can only run on some platforms say so, in the words the summary reporter allows
// under CI: "not on this platform: <why>". Anything else that skips under CI fails the run.
import { describe, it, type TestContext } from 'vitest';
import { PLATFORM_SKIP } from './summary-reporter.js';

export { PLATFORM_SKIP };

type SuiteBody = () => void;

/**
 * `describe`, on the given platforms only. Elsewhere the suite's body is never run and one test
 * stands for it, skipped with the platform note. `when` is a further condition (a build, a tool):
 * when it is false the suite is skipped with no note, which fails a CI run.
 */
export function describeOn(platforms: readonly NodeJS.Platform[], why: string, when = true) {
  const here = platforms.includes(process.platform);
  const stand = (name: string) =>
    describe(name, () => {
      it(`runs on ${platforms.join(', ')} only`, (ctx) => ctx.skip(`${PLATFORM_SKIP} ${why}`));
    });
  const suite = (name: string, body: SuiteBody): void => {
    if (!here) stand(name);
    else describe.runIf(when)(name, body);
  };
  suite.each =
    <T>(cases: readonly T[]) =>
    (name: string, body: (c: T) => void): void => {
      if (!here) stand(name);
      else describe.runIf(when).each(cases as T[])(name, body as (...args: unknown[]) => void);
    };
  return suite;
}

/** `it`, on the given platforms only; elsewhere skipped with the platform note. */
export function itOn(platforms: readonly NodeJS.Platform[], why: string) {
  const here = platforms.includes(process.platform);
  return (name: string, body: (ctx: TestContext) => Promise<void> | void, timeout?: number): void => {
    if (here) it(name, body, timeout);
    else it(name, (ctx) => ctx.skip(`${PLATFORM_SKIP} ${why}`));
  };
}
