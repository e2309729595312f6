// The suite's reporter in a real vitest run of fixture files: the summary line CI reads, and
// under CI a skip fails the run unless it says the test cannot run on this platform.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CONFIG = 'test/fixtures/skips/vitest.config.ts';
const VITEST = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));

interface Run {
  readonly code: number;
  readonly stdout: string;
}

function vitest(args: readonly string[], ci: string | undefined): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' };
  delete env.CI;
  delete env.VITEST;
  delete env.VITEST_WORKER_ID;
  delete env.VITEST_POOL_ID;
  if (ci !== undefined) env.CI = ci;
  return new Promise((resolve) => {
    execFile(process.execPath, [VITEST, 'run', '--config', CONFIG, ...args], { cwd: ROOT, env, timeout: 60_000 }, (error, stdout) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 99) : 0, stdout }),
    );
  });
}

const lastLine = (out: string) => out.trim().split('\n').at(-1);

describe('summary reporter', () => {
  it('under CI=true a skip for a missing tool or with no reason fails the run and is listed; a platform skip is not', async () => {
    const run = await vitest([], 'true');
    expect(run.code).toBe(1);
    expect(lastLine(run.stdout)).toBe('tests: 1 passed, 0 failed, 5 skipped');
    expect(run.stdout).toContain('unexpected skips under CI (a skip must run, or say "not on this platform: ..."): 3\n');
    expect(run.stdout).toContain('  test/fixtures/skips/missing-tool.fixture.ts > drives a tmux pane: tmux is not installed\n');
    expect(run.stdout).toContain('  test/fixtures/skips/missing-tool.fixture.ts > the built CLI > prints its help: skipped with no reason (it.skip, skipIf, runIf)\n');
    expect(run.stdout).toContain('  test/fixtures/skips/missing-tool.fixture.ts > needs a build > runs dist: skipped with no reason (it.skip, skipIf, runIf)\n');
    expect(run.stdout).not.toContain('reads a macOS-only facility');
    expect(run.stdout).not.toContain('AIX');
  }, 90_000);

  it('under CI (CI=1) a run whose only skips declare their platform passes (ctx.skip note, describeOn)', async () => {
    const run = await vitest(['platform.fixture.ts'], '1');
    expect(run.code).toBe(0);
    expect(lastLine(run.stdout)).toBe('tests: 1 passed, 0 failed, 2 skipped');
    expect(run.stdout).not.toContain('unexpected skips');
  }, 90_000);

  it('outside CI (unset, or CI=false) skips are counted, not failures', async () => {
    for (const ci of [undefined, 'false']) {
      const run = await vitest([], ci);
      expect(run.code, `CI=${String(ci)}`).toBe(0);
      expect(lastLine(run.stdout)).toBe('tests: 1 passed, 0 failed, 5 skipped');
      expect(run.stdout).not.toContain('unexpected skips');
    }
  }, 90_000);
});
