// The process of a tmux window that spawn_agent opened (agent-spawner.ts). It reads what to start
// from the request file serve wrote (0600, in a folder of its own), deletes it, and starts the agent
// as its child with the pane as its terminal. The environment travels in that file and not on
// tmux's command line: argv is visible to every user in `ps`, and the environment holds HYPI_TOKEN.
// It waits as a shell waits for a foreground job (Ctrl-C and Ctrl-\ are the agent's; SIGTERM is
// passed on), then writes how the agent ended next to the request and exits the same way.
// Run as: node agent-launcher.js <request file>
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { sanitize } from '../core/sanitize.js';
import { EXIT_FILE, type LaunchExit, type LaunchRequest } from './launch-request.js';

/** The pane's own terminal variables win over serve's: they name this pane, not serve's. */
const PANE_VARIABLES = ['TERM', 'TMUX', 'TMUX_PANE'] as const;

function readRequest(file: string): LaunchRequest {
  const request = JSON.parse(readFileSync(file, 'utf8')) as LaunchRequest;
  rmSync(file, { force: true });
  return request;
}

function finish(folder: string, exit: LaunchExit, status: number): void {
  try {
    writeFileSync(join(folder, EXIT_FILE), JSON.stringify(exit), { mode: 0o600 });
  } catch {
    // serve no longer waits for this agent and removed the folder
  }
  process.exit(status);
}

function main(): void {
  const file = process.argv[2];
  if (file === undefined) {
    process.stderr.write('usage: agent-launcher.js <request file>\n');
    process.exit(2);
  }
  const folder = dirname(file);
  let request: LaunchRequest;
  try {
    request = readRequest(file);
  } catch (err) {
    const error = `cannot read the launch request: ${(err as Error).message}`;
    process.stderr.write(`ghostwatch: ${sanitize(error)}\n`);
    return finish(folder, { error }, 1);
  }
  const env: Record<string, string> = { ...request.env };
  for (const name of PANE_VARIABLES) {
    const own = process.env[name];
    if (own === undefined) delete env[name];
    else env[name] = own;
  }
  const child = spawn(request.command, [], { cwd: request.cwd, env, stdio: 'inherit' });
  // The terminal sends these to the whole foreground group: the agent decides what they mean.
  for (const signal of ['SIGINT', 'SIGQUIT', 'SIGHUP'] as const) process.on(signal, () => {});
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.once('error', (err) => {
    process.stderr.write(`ghostwatch: ${sanitize(err.message)}\n`);
    finish(folder, { error: err.message }, 127);
  });
  child.once('exit', (code, signal) => {
    const number = signal === null ? 0 : (constants.signals[signal] ?? 0);
    finish(folder, { code, signal }, code ?? 128 + number);
  });
}

main();
