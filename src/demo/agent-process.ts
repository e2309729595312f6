// One process of the demo cast, wherever it runs: a child of the demo with pipes (startChildAgents)
// or, inside tmux, a pane of the demo's window (pane-agents.ts). The cast sees the same thing
// either way: the lines it reports, how it ended, a way to ask it to leave.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { childEnv } from './child-env.js';

/** Which agent to start: `node agent.js <role> <name> [flags]`, with `env` added to its environment. */
export interface AgentSpec {
  readonly role: string;
  readonly name: string;
  readonly flags: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

export interface AgentOutput {
  /** One line of its reports (formatReport), or anything else it said there. */
  readonly onLine: (line: string) => void;
  /** One line of its stderr, when the demo reads it (a pane shows it instead). */
  readonly onStderr: (line: string) => void;
}

export interface AgentProcess {
  /** Its pid, also the id of its process group (it leads one, wherever it runs). */
  readonly pid: number;
  /** The tmux pane it runs in (`%N`), when it has one of its own. */
  readonly pane?: string;
  /** Resolves once it has ended, with how ("code 1", "SIGKILL", "in tmux pane %4"). */
  readonly exited: Promise<string>;
  /** Ask it to leave: it cleans up its own children, then exits. */
  end(): void;
  /** Let go of its pipes or line. */
  release(): void;
}

export interface AgentStarter {
  start(spec: AgentSpec, output: AgentOutput): Promise<AgentProcess | { readonly error: string }>;
  /** After the cast ended: close what the starter opened. */
  close(): Promise<void>;
  /** Synchronous last resort (process 'exit'). */
  closeSync(): void;
}

/**
 * Agents as children of the demo, each leading its own process group (detached), its stdin a pipe
 * from the demo (it ends when that closes: the demo is gone), its reports on its stdout.
 */
export function startChildAgents(script: string): AgentStarter {
  return {
    async start(spec, output) {
      const child = spawn(process.execPath, [script, spec.role, spec.name, ...spec.flags], {
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: childEnv(process.env, spec.env),
      });
      if (child.pid === undefined) {
        const error = await new Promise<Error>((resolve) => child.once('error', resolve));
        return { error: error.message };
      }
      const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? `code ${code}`)));
      child.on('error', () => {}); // a failed kill() after exit: the exit is what counts
      child.stdin?.on('error', () => {}); // never written to: it is only there to close when we die
      createInterface({ input: child.stdout! }).on('line', output.onLine);
      createInterface({ input: child.stderr! }).on('line', output.onStderr);
      return {
        pid: child.pid,
        exited,
        end: () => void child.kill('SIGTERM'),
        release: () => {
          child.stdin?.destroy();
          child.stdout?.destroy();
          child.stderr?.destroy();
        },
      };
    },
    close: () => Promise.resolve(),
    closeSync: () => {},
  };
}
