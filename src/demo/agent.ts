// One demo agent: a real process of the demo cast, started by src/demo/cast.ts as
//   node agent.js <role> <project> [--claim]
// with the registry URL in $GHOSTWATCH_DEMO_URL. It reports to the cast as JSON lines on stdout
// and ends on SIGTERM, SIGINT or SIGHUP, or when its stdin closes (the demo that started it is
// gone, however it died): it cleans up its own children first, so none is left behind.
// In a tmux pane of the demo's window ($GHOSTWATCH_DEMO_LINK set, pane-agents.ts) its stdout is
// the pane: it reports on the demo's socket instead (agent-link.ts), ends when that closes, and
// prints for a person who it is and what it does.
import type { Socket } from 'node:net';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { AgentContext } from './agent-context.js';
import { connectLink } from './agent-link.js';
import { paneHeader, paneLine, paneTitle, titleSequence } from './pane-output.js';
import { ENV_LINK, ENV_LINK_KEY, ENV_SEQ, ENV_URL, formatReport, type ReportKind } from './reports.js';

/** Cleanup gets this long; then the agent exits anyway (the cast SIGKILLs its process group). */
const STOP_GRACE_MS = 1_500;

const [role = '', name = role, ...flags] = process.argv.slice(2);
const cleanups: (() => unknown)[] = [];
let stopping = false;
// Read once and taken out: the agents this one starts (the supervisor's workers) are its own children.
const linkPath = process.env[ENV_LINK];
const linkKey = process.env[ENV_LINK_KEY] ?? '';
delete process.env[ENV_LINK];
delete process.env[ENV_LINK_KEY];
let link: Socket | undefined;

function report(kind: ReportKind, text: string): void {
  if (linkPath === undefined) {
    if (process.stdout.writable) process.stdout.write(formatReport({ kind, text }));
    return;
  }
  if (link?.writable) link.write(formatReport({ kind, text }));
  if (process.stdout.writable) process.stdout.write(`${paneLine(text, new Date())}\n`);
}

async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  setTimeout(() => process.exit(code), STOP_GRACE_MS).unref();
  for (const fn of cleanups.splice(0).reverse()) {
    try {
      await fn();
    } catch {
      // best effort: the next cleanup still runs
    }
  }
  process.exit(code);
}

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => void stop(0));
process.stdout.on('error', () => void stop(0));
const crash = (error: unknown): void => {
  report('error', `${role} ${name} crashed: ${error instanceof Error ? error.message : String(error)}`);
  void stop(1);
};
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);

if (linkPath === undefined) {
  // The cast holds the other end of stdin: end of file means the demo is gone.
  process.stdin.on('end', () => void stop(0));
  process.stdin.on('error', () => void stop(0));
  process.stdin.resume();
} else {
  const url = process.env[ENV_URL] ?? '';
  process.stdout.write(titleSequence(paneTitle(role, name, process.pid)));
  process.stdout.write(`${paneHeader({ role, name, flags, pid: process.pid, url }).join('\n')}\n`);
  try {
    link = await connectLink(linkPath, linkKey);
  } catch (error) {
    process.stdout.write(`${paneLine(`cannot reach the demo: ${(error as Error).message}`, new Date())}\n`);
    process.exit(1);
  }
  // The demo closes its end (or dies): this agent's turn is over.
  link.on('end', () => void stop(0));
  link.on('error', () => void stop(0));
  link.on('close', () => void stop(0));
}

const ctx: AgentContext = {
  url: process.env[ENV_URL] ?? '',
  name,
  seq: Number(process.env[ENV_SEQ] ?? 0),
  machine: hostname(),
  startedAt: Math.round(performance.timeOrigin),
  script: fileURLToPath(import.meta.url),
  env: process.env,
  report,
  onStop: (fn) => void cleanups.push(fn),
  get stopping() {
    return stopping;
  },
};

async function run(): Promise<void> {
  switch (role) {
    case 'worker':
      return; // a supervised child: it only has to exist (until it is killed)
    case 'live':
      return (await import('./roles.js')).runLive(ctx, { claim: flags.includes('--claim') });
    case 'reused':
      return (await import('./roles.js')).runReused(ctx);
    case 'superseded':
      return (await import('./roles.js')).runSuperseded(ctx);
    case 'pending':
      return (await import('./roles.js')).runPending(ctx);
    case 'offline':
      return (await import('./roles.js')).runOffline(ctx);
    case 'supervisor':
      return (await import('./supervisor.js')).runSupervisor(ctx);
    case 'host':
      return (await import('./fleet-role.js')).runHostCast(ctx);
    default:
      throw new Error(`unknown role "${role}"`);
  }
}

try {
  await run();
  if (role !== 'worker') report('staged', `${role} ${name}: staged`);
} catch (error) {
  crash(error);
}
