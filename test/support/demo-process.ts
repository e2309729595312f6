// `ghostwatch demo` (the built CLI) as a child process for the demo tests: the registry URL it
// prints first on stdout, its stderr lines as they come, and its exit.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { BIN } from './tmux.js';

export interface Demo {
  readonly child: ChildProcess & { pid: number };
  readonly url: Promise<string>;
  readonly stderr: string[];
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first stderr line matching `pattern`. */
  line(pattern: RegExp, timeoutMs: number): Promise<string>;
}

/** Starts `ghostwatch demo ...args`; the caller ends it (and waits for `exit`). */
export function startDemo(args: readonly string[], env: NodeJS.ProcessEnv): Demo {
  const child = spawn(process.execPath, [BIN, 'demo', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] }) as ChildProcess & { pid: number };
  const stderr: string[] = [];
  const watchers = new Set<(line: string) => void>();
  createInterface({ input: child.stderr! }).on('line', (l) => {
    stderr.push(l);
    for (const w of watchers) w(l);
  });
  const url = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', () => reject(new Error(`the demo exited before printing its URL:\n${stderr.join('\n')}`)));
  });
  url.catch(() => {});
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const line = (pattern: RegExp, timeoutMs: number): Promise<string> =>
    new Promise((resolve, reject) => {
      const seen = stderr.find((l) => pattern.test(l));
      if (seen !== undefined) return resolve(seen);
      const timer = setTimeout(() => {
        watchers.delete(watch);
        reject(new Error(`no stderr line matching ${pattern} within ${timeoutMs} ms:\n${stderr.join('\n')}`));
      }, timeoutMs);
      const watch = (l: string): void => {
        if (!pattern.test(l)) return;
        clearTimeout(timer);
        watchers.delete(watch);
        resolve(l);
      };
      watchers.add(watch);
    });
  return { child, url, stderr, exit, line };
}
