// `ghostwatch demo`: the embedded registry, in-process, plus a cast of real agent processes in
// every failure mode (src/demo/cast.ts), and the live monitor on it. `--headless` leaves the
// monitor out: the registry URL is the first line of stdout, cast events go to stderr.
// Every way out (q, Ctrl-C, SIGTERM, SIGHUP, SIGINT, a crash) ends every process of the cast.
import { delimiter, dirname, join } from 'node:path';
import { sanitize } from '../core/sanitize.js';
import type { Cast } from '../demo/cast.js';
import type { Fleet } from '../demo/fleet.js';
import type { RegistryServer } from '../server/index.js';
import { formatOptions, parseArgs, UsageError, type OptionSpec } from './args.js';
import type { MonitorSettings } from './settings.js';

export const DEMO_OPTIONS: readonly OptionSpec[] = [
  { name: 'headless', type: 'boolean', description: 'no monitor: print the registry URL, then run the cast until a signal' },
  { name: 'fleet', type: 'boolean', description: 'also start 3 fake hosts in namespaces, each with agents and its own sshd, verified over ssh (root, Linux)' },
  { name: 'port', type: 'number', valueName: 'N', description: 'port of the demo registry on 127.0.0.1 (default 0 = any free port)' },
  { name: 'help', type: 'boolean', description: 'show this help' },
];

const HOST = '127.0.0.1';
/**
 * Offline rows normally go after 30 s; the demo keeps them 10 minutes so they stay on screen
 * (the offline agent also re-registers every 5 minutes, so its row is always there).
 */
const DEMO_TTL_SECONDS = 600;
/** The monitor starts once the cast has staged everything, or after this long regardless. */
const READY_WAIT_MS = 8_000;

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const SIGNAL_CODES: Readonly<Partial<Record<NodeJS.Signals, number>>> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };

export function demoUsage(): string {
  return [
    'ghostwatch demo — a registry full of real agents in every failure mode, and the monitor on it',
    '',
    'Usage: ghostwatch demo [options]',
    '',
    'Options:',
    formatOptions(DEMO_OPTIONS),
    '',
    `Starts an embedded registry on ${HOST} (offline rows kept ${DEMO_TTL_SECONDS / 60} minutes instead of 30 s, so they`,
    'stay visible) and real processes that register with it the way pi-socket does: live agents, a',
    'ghost (a SIGKILLed child its supervisor still registers), a zombie, a reused pid, a superseded',
    'session, young and dead pending-* ids, an offline node, a remote host, a held and a stale claim.',
    'A new ghost appears about every 30 s, so eviction can be tried again and again. Quitting',
    '(q, Ctrl-C, or any signal) ends every demo process.',
    '',
    'Inside tmux the agents run in panes of a window of their own, gw-demo (opened in the background',
    'in the current session; an agent no pane has room for runs in the demo\'s terminal): the PANE',
    'column names each agent\'s pane, and o goes there. The window closes when the demo ends.',
    '',
    'With --fleet (root, Linux, util-linux and openssh-server) it also starts the fake hosts build-41,',
    'build-42 and gpu-7: each its own hostname and pids (UTS, PID and mount namespaces) and a private',
    'sshd on a loopback port, running a live agent, a ghost, a pending straggler and a zombie that',
    'register under that host\'s name. The monitor verifies them over ssh (batch mode, keys made for',
    'the demo, nothing of ~/.ssh); quitting ends the hosts too.',
    '',
    'The demo\'s monitor reads the demo\'s registry alone. Its registry is on a port of its own, so the',
    'other commands, which with no --registry read only the registries at this host\'s usual places,',
    'are pointed at it by name (--registry URL), or find it with --port 31415 (the default address).',
    '',
    'Examples:',
    '  ghostwatch demo                       # the live monitor on the demo; evict with d, quit with q',
    '  sudo ghostwatch demo --fleet          # the same, plus three fake hosts verified over ssh',
    '  ghostwatch demo --headless            # print the registry URL, log cast events, run until Ctrl-C',
    '  ghostwatch demo --headless --port 31415 &',
    '  ghostwatch check --registry ws://127.0.0.1:31415/ws --json',
  ].join('\n');
}

function say(line: string): void {
  process.stderr.write(`ghostwatch demo: ${line}\n`);
}

function portOf(value: unknown): number {
  if (value === undefined) return 0;
  const n = typeof value === 'number' ? value : Number.NaN;
  if (!Number.isInteger(n) || n > 65_535) throw new UsageError(`--port needs a whole number from 0 to 65535, got ${n}`);
  return n;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

export async function demoCommand(argv: string[]): Promise<number> {
  const { options, positionals } = parseArgs(argv, DEMO_OPTIONS);
  if (options.help) {
    process.stdout.write(`${demoUsage()}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`demo takes no arguments, got "${sanitize(positionals[0])}"`);
  const port = portOf(options.port);
  const headless = options.headless === true;
  const wantFleet = options.fleet === true;
  if (wantFleet) {
    // Checked before anything starts: without it, nothing is started at all.
    const missing = (await import('../demo/fleet-hosts.js')).fleetHostRequirement();
    if (missing !== undefined) {
      say(`--fleet needs ${missing.needs}: ${missing.how}; nothing was started (without --fleet the demo runs anywhere)`);
      return 2;
    }
  }

  let cast: Cast | undefined;
  let fleet: Fleet | undefined;
  // The last resort, for every exit that skips the orderly path below: process.exit() from the
  // monitor's own signal handlers (src/ui/terminal.ts), an uncaught error, a second signal.
  const killCast = (): void => {
    cast?.killNow();
    fleet?.killNow();
  };
  process.on('exit', killCast);
  const ignoreBrokenStderr = (): void => {}; // a closed terminal (SIGHUP) must not turn cleanup into a crash
  process.stderr.on('error', ignoreBrokenStderr);

  // Installed before anything starts: a signal during start-up still ends in a clean stop.
  let received: NodeJS.Signals | undefined;
  let onSignal: (signal: NodeJS.Signals) => void = () => {};
  const signalled = new Promise<NodeJS.Signals>((resolve) => (onSignal = resolve));
  const handler = (signal: NodeJS.Signals): void => {
    if (received !== undefined) {
      // A second signal while stopping: no more waiting.
      killCast();
      process.exit(SIGNAL_CODES[signal] ?? 1);
    }
    received = signal;
    onSignal(signal);
  };
  for (const s of SIGNALS) process.on(s, handler);

  let server: RegistryServer | undefined;
  try {
    const { startRegistryServer } = await import('../server/index.js');
    try {
      server = await startRegistryServer({ host: HOST, port, quiet: true, ttlSeconds: DEMO_TTL_SECONDS });
    } catch (error) {
      const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
      if (code === 'EADDRINUSE') say(`cannot listen: ${HOST} port ${port} is already in use (try --port 0)`);
      else say(`cannot listen on ${HOST} port ${port}: ${sanitize(error instanceof Error ? error.message : String(error))}`);
      return 2;
    }
    if (received !== undefined) return 0;
    const { startCast } = await import('../demo/cast.js');
    const onEvent = headless ? { onEvent: (line: string) => say(sanitize(line, 1000)) } : {};
    const { insideTmux } = await import('../server/tmux-window.js');
    // Inside tmux each agent gets a pane of the demo's own window: its PANE, where `o` goes.
    cast = startCast({ url: server.url, ...onEvent, ...(insideTmux(process.env) ? { tmux: { env: process.env } } : {}) });
    if (wantFleet) {
      try {
        const { FLEET, startFleet } = await import('../demo/fleet.js');
        if (!headless) say(`starting the fleet: ${FLEET.map((f) => f.hostname).join(', ')}...`);
        fleet = await startFleet({ url: server.url, ...onEvent });
      } catch (error) {
        say(`--fleet: the fake hosts did not start: ${sanitize(error instanceof Error ? error.message : String(error), 400)}`);
        return 1;
      }
      if (received !== undefined) return 0;
    }

    if (headless) {
      process.stdout.write(`${server.url}\n`);
      // With no --registry the other commands look only at the default address: say how to reach this one.
      if (!fleet) say(`check it with: ghostwatch check --registry ${server.url}${port === 31415 ? ' (or plain ghostwatch: this is the default address)' : ''}`);
      if (fleet) {
        const ssh = fleet.sshHosts.map((h) => `--ssh ${h.machine}=${h.dest}`).join(' ');
        say(`fleet: verify the hosts with: PATH=${fleet.binDir}:$PATH ghostwatch check --registry ${server.url} ${ssh} --json`);
      }
      const signal = await signalled;
      say(`${signal}: ending the cast`);
      return 0;
    }

    say(`registry on ${server.url}; starting the cast...`);
    const staged = Promise.all([cast.ready, fleet?.ready]);
    const first = await Promise.race([staged.then(() => 'ready' as const), signalled, sleep(READY_WAIT_MS).then(() => 'late' as const)]);
    if (first !== 'ready' && first !== 'late') return 0;
    const [{ runMonitor }, { defaultAuditLogPath }] = await Promise.all([import('./monitor.js'), import('../engine/audit-log.js')]);
    // Evictions of the demo's staged ghosts are audited in a log of their own, not in the real one.
    const auditLogPath = join(dirname(defaultAuditLogPath()), 'demo-evictions.jsonl');
    const settings: MonitorSettings = {
      kinds: ['hypivisor'],
      target: { url: server.url },
      agentctlSocket: '',
      claude: { claudeDirs: [] },
      intervalScale: 1,
      hostAliases: [],
      readOnly: false,
      // The fake hosts, each its name as the destination: the demo's own `ssh` (first on PATH)
      // is the system one with the demo's ssh_config (src/demo/fleet.ts).
      sshHosts: fleet?.sshHosts ?? [],
      sshAll: false,
      probeRemotePorts: false,
      auditLogPath,
      // What the demo's agents start is remembered apart from what real agents started.
      leftoverMemoryPath: join(dirname(defaultAuditLogPath()), 'demo-descendants.json'),
    };
    if (fleet) process.env.PATH = `${fleet.binDir}${delimiter}${process.env.PATH ?? ''}`;
    // In a terminal the monitor handles signals itself (and exits); without one it prints a report.
    const outcome = await Promise.race([runMonitor(settings), signalled]);
    if (typeof outcome === 'string') {
      // A signal while the one-shot report was being made: its engine may still be running.
      await stopAll(cast, server, fleet);
      process.exit(SIGNAL_CODES[outcome] ?? 1);
    }
    return outcome === 2 ? 2 : 0;
  } finally {
    await stopAll(cast, server, fleet);
    for (const s of SIGNALS) process.off(s, handler);
    process.off('exit', killCast);
    process.stderr.off('error', ignoreBrokenStderr);
  }
}

async function stopAll(cast: Cast | undefined, server: RegistryServer | undefined, fleet: Fleet | undefined): Promise<void> {
  await Promise.all([cast?.stop(), fleet?.stop()]);
  await server?.close();
}
