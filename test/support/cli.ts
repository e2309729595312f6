// The built CLI as a real process: its exit code and what it printed. The caller gives the whole
// environment (tests pin XDG folders, registry variables and the like).
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isLinux } from './processes.js';
import { BIN, ROOT } from './tmux.js';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Any command (setpriv, unshare ... in front of the CLI): its exit code (99 when it could not run) and output. */
export function runCommand(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env, timeout: 20_000 }, (error, stdout, stderr) =>
      resolve({ code: typeof error?.code === 'number' ? error.code : error ? 99 : 0, stdout, stderr }),
    );
  });
}

export function runCli(args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  return runCommand(process.execPath, [BIN, ...args], env);
}

/**
 * Why a test that runs the built CLI as another user (root drops to nobody) cannot run here, or
 * undefined. `asRoot`: what root is needed for, in the test's words.
 */
export function otherUserRequirement(asRoot: string): string | undefined {
  if (!isLinux) return 'needs Linux';
  if (process.getuid?.() !== 0) return `needs root (${asRoot})`;
  if (!existsSync(join(ROOT, 'dist/bundle/main.js'))) return 'dist/ is not built: run npm run build';
  return undefined;
}

/**
 * A copy of the launcher and the built CLI that another user can read, wherever the checkout is,
 * in a new folder (0755) under the temp folder: its path; the caller removes it. The built CLI
 * needs nothing from node_modules (test/cli/package-contents.test.ts).
 */
export function cliCopyForAnyUser(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  cpSync(join(ROOT, 'bin'), join(dir, 'bin'), { recursive: true });
  cpSync(join(ROOT, 'dist/bundle'), join(dir, 'dist/bundle'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  return dir;
}

/** What `ghostwatch reap` printed as it ended: each entry's outcome by id, and its summary line's counts. */
export interface ReapReport {
  readonly outcomes: ReadonlyMap<string, string>;
  readonly counts: Readonly<Record<'evicted' | 'already gone' | 'skipped' | 'refused' | 'failed', number>> | undefined;
}

/**
 * Reads reap's result lines (`<outcome> <kind> [<source>] <id> ...`: the source column is there
 * when reap read several registries; pass its name then) and its summary line.
 */
export function reapReport(stdout: string, source?: string): ReapReport {
  const outcomes = new Map<string, string>();
  const column = source === undefined ? '' : `${source.replace(/[^\w-]/g, '\\$&')} +`;
  // The id ends at a space or at the colon before the detail.
  const line = new RegExp(`^(evicted|already-gone|skipped|refused|failed) +(?:session|claim) +${column}(\\S+?):?(?: |$)`, 'gm');
  for (const m of stdout.matchAll(line)) outcomes.set(m[2]!, m[1]!);
  const summary = /^evicted (\d+), already gone (\d+), skipped (\d+), refused (\d+), failed (\d+)/m.exec(stdout);
  const n = (i: number): number => Number(summary![i]);
  const counts = summary ? { evicted: n(1), 'already gone': n(2), skipped: n(3), refused: n(4), failed: n(5) } : undefined;
  return { outcomes, counts };
}
