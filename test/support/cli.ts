// The built CLI as a real process: its exit code and what it printed. The caller gives the whole
// environment (tests pin XDG folders, registry variables and the like).
import { execFile } from 'node:child_process';
import { BIN } from './tmux.js';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCli(args: readonly string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env, timeout: 20_000 }, (error, stdout, stderr) =>
      resolve({ code: typeof error?.code === 'number' ? error.code : error ? 99 : 0, stdout, stderr }),
    );
  });
}
