// The demo cast: real agent processes that between them produce every verdict (design.md).
// Each is `node agent.js <role> <project>` and leads its own process group: `process.kill(-pgid,
// 'SIGKILL')` then takes its children too, and no way out of the demo leaves one behind. It runs
// as our child, its stdin a pipe from us (it ends when the demo dies), or, inside tmux, as the
// process of a pane of the demo's own window (pane-agents.ts), linked to us by a socket that does
// the same; agent-process.ts hides which.
//
//   live ×3          registers itself like pi-socket; the first also holds a claim (`held`)
//   reused           live, but registered with a start time an hour before its real one
//   superseded       one process, two sessions (ids A then B), both connections kept
//   pending          `pending-<pid>`, young: live and "resolving"; resolves after 90 s and is
//                    replaced by the next pending agent
//   offline          registered, then closed its connection
//   supervisor       ghost, stale-claim, pending straggler, zombie, remote, a new ghost every 30 s
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startChildAgents, type AgentProcess, type AgentStarter } from './agent-process.js';
import type { DemoWindowOptions } from './demo-window.js';
import { ENV_SEQ, ENV_URL, parseReport, type AgentReport } from './reports.js';

export interface CastOptions {
  readonly url: string;
  /** One line per cast event (headless mode prints them). */
  readonly onEvent?: (line: string) => void;
  /** The agent program; default: the compiled agent.js (see agentScriptPath). */
  readonly agentScript?: string;
  /** Extra environment for every agent (the timing overrides of reports.ts). */
  readonly env?: Readonly<Record<string, string>>;
  /** Inside tmux: every agent in a pane of a window of the demo's own (`gw-demo`), in this tmux. */
  readonly tmux?: DemoWindowOptions;
}

export interface Cast {
  /** Resolves once every agent of the opening line-up has staged its entries (or died trying). */
  readonly ready: Promise<void>;
  /** Ask every agent to leave (each cleans up its children), then SIGKILL every group, close the window; resolves once done. */
  stop(): Promise<void>;
  /** Synchronous last resort, for process 'exit': SIGKILL every process group of the cast, close the window. */
  killNow(): void;
  /** The agents' pids (each also the id of its process group). */
  pids(): number[];
}

interface Member {
  readonly label: string;
  readonly proc: AgentProcess;
  readonly pid: number;
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

/** Asked to leave, an agent gets this long to end cleanly; then its whole group is SIGKILLed. */
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

/** Where the agents run: panes of the demo's window inside tmux (when that can be set up), else children. */
async function starterFor(opts: CastOptions, script: string, say: (line: string) => void): Promise<AgentStarter> {
  const children = startChildAgents(script);
  if (opts.tmux === undefined) return children;
  const [{ startPaneAgents }, { DemoWindow }] = await Promise.all([import('./pane-agents.js'), import('./demo-window.js')]);
  return startPaneAgents({ script, window: new DemoWindow(opts.tmux), fallback: children, say });
}

export function startCast(opts: CastOptions): Cast {
  const script = opts.agentScript ?? agentScriptPath();
  const say = opts.onEvent ?? (() => {});
  const members = new Set<Member>();
  let stopping = false;
  let pendingSeq = 0;
  let resolved: Member | undefined;
  let starter: AgentStarter | undefined;
  const starting = starterFor(opts, script, say).then((s) => (starter = s));

  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const opening: Member[] = [];
  let openingStarted = false;
  const checkReady = (): void => {
    if (openingStarted && opening.every((m) => m.staged || m.done)) {
      const staged = opening.filter((m) => m.staged).length;
      if (staged === OPENING.length) say(`cast ready: ${staged} agents staged`);
      else say(`cast ready with gaps: ${staged} of ${OPENING.length} agents staged`);
      opening.length = 0;
      openingStarted = false;
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
        resolved.proc.end();
      }
      resolved = member;
      if (!stopping) void launch({ role: 'pending', name: 'docs-site' });
    }
  };

  const launchNow = async (role: Role): Promise<Member | undefined> => {
    const using = await starting;
    if (stopping) return undefined;
    const seq = role.role === 'pending' ? ++pendingSeq : 0;
    const label = `${role.role} ${role.name}`;
    // Lines can come before the member exists (an agent in a pane is quick to connect): held until then.
    let member: Member | undefined;
    const early: string[] = [];
    const onLine = (line: string): void => {
      if (member === undefined) return void early.push(line);
      const report = parseReport(line);
      if (report) onReport(member, report);
      else if (line.trim() !== '') say(`[${label}] ${line}`);
    };
    const onStderr = (line: string): void => {
      if (line.trim() !== '') say(`[${label}] stderr: ${line}`);
    };
    const env = { ...opts.env, [ENV_URL]: opts.url, [ENV_SEQ]: String(seq) };
    const proc = await using.start({ role: role.role, name: role.name, flags: role.flags ?? [], env }, { onLine, onStderr });
    if ('error' in proc) {
      say(`[${label}] could not start: ${proc.error}`);
      return undefined;
    }
    member = { label, proc, pid: proc.pid, done: false, staged: false, retiring: false };
    members.add(member);
    say(`[${label}] started, pid ${proc.pid}${proc.pane === undefined ? '' : `, in tmux pane ${proc.pane}`}`);
    for (const line of early.splice(0)) onLine(line);
    const m = member;
    void proc.exited.then((how) => {
      m.done = true;
      if (!stopping) {
        if (m.retiring) say(`[${label}] pid ${m.pid} ended its session and exited`);
        else say(`[${label}] pid ${m.pid} exited unexpectedly (${how})`);
        // Whatever it left in its group goes now (while the group exists its id cannot be
        // recycled); then it is forgotten, so a recycled pid is never signalled later.
        killGroup(m.pid, 'SIGKILL');
        members.delete(m);
      }
      checkReady();
    });
    return member;
  };

  // One start at a time: an agent's pane is split from the window as the one before left it.
  let queue: Promise<unknown> = Promise.resolve();
  const launch = (role: Role): Promise<Member | undefined> => {
    const next = queue
      .then(() => launchNow(role))
      .catch((error: Error) => {
        say(`[${role.role} ${role.name}] could not start: ${error.message}`);
        return undefined;
      });
    queue = next;
    return next;
  };

  void Promise.all(OPENING.map(launch)).then((started) => {
    if (stopping) return; // stop() says ready itself
    for (const m of started) if (m) opening.push(m);
    openingStarted = true;
    checkReady();
  });

  const allExited = (): Promise<unknown> => Promise.all([...members].map((m) => m.proc.exited));

  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      stopping = true;
      await queue; // a start under way ends with its member among those asked to leave
      for (const m of members) if (!m.done) m.proc.end();
      await Promise.race([allExited(), sleep(STOP_GRACE_MS)]);
      // Even after a clean exit: a group can outlive its leader when a child of it did not end.
      for (const m of members) killGroup(m.pid, 'SIGKILL');
      await Promise.race([allExited(), sleep(REAP_WAIT_MS)]);
      for (const m of members) m.proc.release();
      members.clear();
      await (await starting).close();
      markReady();
    })();
    return stopped;
  };

  const killNow = (): void => {
    stopping = true;
    for (const m of members) killGroup(m.pid, 'SIGKILL');
    starter?.closeSync();
  };

  return { ready, stop, killNow, pids: () => [...members].map((m) => m.pid) };
}
