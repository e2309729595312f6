// Starts test/support/pi-agent.mjs (a pi-socket-like agent process) and waits for its registration.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const PI_AGENT_SCRIPT = join(import.meta.dirname, 'pi-agent.mjs');

export interface PiAgent {
  readonly child: ChildProcess;
  /** The first (or only) session's id and port. */
  readonly id: string;
  readonly port: number;
  /** Every session the process registered, oldest first (--sessions N). */
  readonly ids: readonly string[];
  readonly ports: readonly number[];
  readonly pid: number;
}

export function startPiAgent(url: string, flags: readonly string[] = [], env: NodeJS.ProcessEnv = process.env): Promise<PiAgent> {
  const child = spawn(process.execPath, [PI_AGENT_SCRIPT, url, ...flags], { stdio: ['pipe', 'pipe', 'pipe'], env });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error(`pi agent did not register in 10 s: ${err}`)), 10_000);
    const fail = (error: Error): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code, signal) => fail(new Error(`pi agent exited (${code ?? signal}) before registering: ${err}`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n')[0];
      if (!out.includes('\n') || line === undefined) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      const m = JSON.parse(line) as { registered: string[]; ports: number[]; pid: number };
      resolve({ child, id: m.registered[0]!, port: m.ports[0]!, ids: m.registered, ports: m.ports, pid: m.pid });
    });
  });
}
