// The demo cast: real agent processes that between them produce every verdict (design.md).
// Each is `node agent.js <role> <project>`, started detached so it leads its own process group:
// `process.kill(-pgid, 'SIGKILL')` then takes its children too, and no way out of the demo
// leaves one behind. Its stdin is a pipe from us, so an agent also ends when the demo dies.
//
//   live ×3          registers itself like pi-socket; the first also holds a claim (`held`)
//   reused           live, but registered with a start time an hour before its real one
//   superseded       one process, two sessions (ids A then B), both connections kept
//   pending          `pending-<pid>`, young: live and "resolving"; resolves after 90 s and is
//                    replaced by the next pending agent
//   offline          registered, then closed its connection
//   supervisor       ghost, stale-claim, pending straggler, zombie, remote, a new ghost every 30 s
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { childEnv } from './child-env.js';
import { ENV_SEQ, ENV_URL, parseReport, type AgentReport } from './reports.js';

export interface CastOptions {
  readonly url: string;
  /** One line per cast event (headless mode prints them). */
  readonly onEvent?: (line: string) => void;
  /** The agent program; default: the compiled agent.js (see agentScriptPath). */
  readonly agentScript?: string;
  /** Extra environment for every agent (the timing overrides of reports.ts). */
  readonly env?: Readonly<Record<string, string>>;
}

export interface Cast {
  /** Resolves once every agent of the opening line-up has staged its entries (or died trying). */
  readonly ready: Promise<void>;
  /** SIGTERM every agent (each cleans up its children), then SIGKILL every group; resolves once reaped. */
  stop(): Promise<void>;
  /** Synchronous last resort, for process 'exit': SIGKILL every process group of the cast. */
  killNow(): void;
  /** The agents' pids (each also the id of its process group). */
  pids(): number[];
}

interface Member {
  readonly label: string;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly exited: Promise<void>;
  done: boolean;
  staged: boolean;
  /** Asked to leave (a resolved pending agent whose successor is on stage): its exit is expected. */
  retiring: boolean;
}

interface Role {
  readonly role: string;
  readonly name: string;
  readonly flags?: readonly string[];
}

const OPENING: readonly Role[] = [
  { role: 'live', name: 'api-gateway', flags: ['--claim'] },
  { role: 'live', name: 'web-dashboard' },
  { role: 'live', name: 'infra-terraform' },
  { role: 'reused', name: 'search-indexer' },
  { role: 'superseded', name: 'mobile-app' },
  { role: 'pending', name: 'docs-site' },
  { role: 'offline', name: 'data-pipeline' },
  { role: 'supervisor', name: 'fleet-supervisor' },
];

/** SIGTERM gets this long to end an agent cleanly; then its whole group is SIGKILLed. */
const STOP_GRACE_MS = 2_000;
const REAP_WAIT_MS = 1_000;

/** The compiled agent next to this module; from the TypeScript sources (tests), the one in dist/. */
export function agentScriptPath(): string {
  const sibling = fileURLToPath(new URL('./agent.js', import.meta.url));
  if (existsSync(sibling)) return sibling;
  return fileURLToPath(new URL('../../dist/src/demo/agent.js', import.meta.url));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is gone already
  }
}

export function startCast(opts: CastOptions): Cast {
  const script = opts.agentScript ?? agentScriptPath();
  const say = opts.onEvent ?? (() => {});
  const members = new Set<Member>();
  let stopping = false;
  let pendingSeq = 0;
  let resolved: Member | undefined;

  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const opening: Member[] = [];
  const checkReady = (): void => {
    if (opening.length > 0 && opening.every((m) => m.staged || m.done)) {
      const staged = opening.filter((m) => m.staged).length;
      if (staged === opening.length) say(`cast ready: ${staged} agents staged`);
      else say(`cast ready with gaps: ${staged} of ${opening.length} agents staged`);
      opening.length = 0;
      markReady();
    }
  };

  const onReport = (member: Member, report: AgentReport): void => {
    say(`[${member.label}] ${report.text}`);
    if (report.kind === 'staged') {
      member.staged = true;
      checkReady();
    } else if (report.kind === 'resolved') {
      // The next young pending agent takes the stage; the one resolved before leaves it.
      if (resolved && !resolved.done) {
        resolved.retiring = true;
        resolved.child.kill('SIGTERM');
      }
      resolved = member;
      if (!stopping) launch({ role: 'pending', name: 'docs-site' });
    }
  };

  const launch = (role: Role): Member | undefined => {
    const seq = role.role === 'pending' ? ++pendingSeq : 0;
    const child = spawn(process.execPath, [script, role.role, role.name, ...(role.flags ?? [])], {
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: childEnv(process.env, { ...opts.env, [ENV_URL]: opts.url, [ENV_SEQ]: String(seq) }),
    });
    const label = `${role.role} ${role.name}`;
    if (child.pid === undefined) {
      child.on('error', (error) => say(`[${label}] could not start: ${error.message}`));
      return undefined;
    }
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const member: Member = { label, child, pid: child.pid, exited, done: false, staged: false, retiring: false };
    members.add(member);
    child.stdin?.on('error', () => {}); // never written to: it is only there to close when we die
    child.on('error', (error) => say(`[${label}] ${error.message}`));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const report = parseReport(line);
      if (report) onReport(member, report);
      else if (line.trim() !== '') say(`[${label}] ${line}`);
    });
    createInterface({ input: child.stderr! }).on('line', (line) => {
      if (line.trim() !== '') say(`[${label}] stderr: ${line}`);
    });
    child.once('exit', (code, signal) => {
      member.done = true;
      if (!stopping) {
        if (member.retiring) say(`[${label}] pid ${member.pid} ended its session and exited`);
        else say(`[${label}] pid ${member.pid} exited unexpectedly (${signal ?? `code ${code}`})`);
        // Whatever it left in its group goes now (while the group exists its id cannot be
        // recycled); then it is forgotten, so a recycled pid is never signalled later.
        killGroup(member.pid, 'SIGKILL');
        members.delete(member);
      }
      checkReady();
    });
    say(`[${label}] started, pid ${child.pid}`);
    return member;
  };

  for (const role of OPENING) {
    const member = launch(role);
    if (member) opening.push(member);
  }
  if (opening.length === 0) markReady();

  const allExited = (): Promise<unknown> => Promise.all([...members].map((m) => m.exited));

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      stopping = true;
      for (const m of members) if (!m.done) m.child.kill('SIGTERM');
      await Promise.race([allExited(), sleep(STOP_GRACE_MS)]);
      // Even after a clean exit: a group can outlive its leader when a child of it did not end.
      for (const m of members) killGroup(m.pid, 'SIGKILL');
      await Promise.race([allExited(), sleep(REAP_WAIT_MS)]);
      for (const m of members) {
        m.child.stdin?.destroy();
        m.child.stdout?.destroy();
        m.child.stderr?.destroy();
      }
      members.clear();
      markReady();
    })();
    return stopped;
  };

  const killNow = (): void => {
    stopping = true;
    for (const m of members) killGroup(m.pid, 'SIGKILL');
  };

  return { ready, stop, killNow, pids: () => [...members].map((m) => m.pid) };
}
