// What a role of the demo cast gets from the agent process it runs in: where the registry is,
// how to tell the cast what happened, how to clean up on the way out, TCP ports of its own, and
// how to end a child of its own for good.
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { ReportKind } from './reports.js';

export interface AgentContext {
  readonly url: string;
  /** The project this agent works on (names its id and cwd). */
  readonly name: string;
  /** Which cycle of its role this agent is (pending agents come one after another). */
  readonly seq: number;
  /** os.hostname(), as pi-socket reports it. */
  readonly machine: string;
  /** Unix ms: when this process started, as pi-socket would send it in `pid_started_at`. */
  readonly startedAt: number;
  /** The path of the agent program, for roles that start agents of their own. */
  readonly script: string;
  readonly env: NodeJS.ProcessEnv;
  report(kind: ReportKind, text: string): void;
  /** Runs on the way out (SIGTERM, parent gone), last registered first. */
  onStop(fn: () => unknown): void;
  /** True once the agent is shutting down: long-running loops stop starting new work. */
  readonly stopping: boolean;
}

export interface Listener {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * A tiny TCP server on a free loopback port: an agent's own endpoint (pi-socket serves one) or a
 * port kept reserved for an entry, so the registry's machine:port rule never removes a demo row
 * because another demo agent happened to get the same free port later.
 */
export function listenTcp(): Promise<Listener> {
  const server = createServer((socket) => socket.end());
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      resolve({
        port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
          }),
      });
    });
  });
}

/** ms to wait until the registry's clock (Unix seconds) has surely moved to the next second. */
export function untilNextSecond(now = Date.now()): number {
  return 1_000 - (now % 1_000) + 50;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** SIGKILL and wait for 'exit': Node has reaped the child by then, so its pid is really gone. */
export function killAndReap(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
