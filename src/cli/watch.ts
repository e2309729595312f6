// `ghostwatch` / `ghostwatch watch`: the live monitor. Without a terminal on both ends it prints
// one check report instead (raw mode needs a TTY, and a pipe wants text, not a screen).
import { hostname, homedir } from 'node:os';
import { render } from 'ink';
import { createElement } from 'react';
import { createEngine } from '../engine/index.js';
import type { Engine } from '../engine/types.js';
import { HypivisorSource } from '../sources/hypivisor/index.js';
import type { Source } from '../sources/types.js';
import { App } from '../ui/app.js';
import { enterFullscreen } from '../ui/terminal.js';
import { formatOptions, parseArgs, UsageError, type OptionSpec, type ParsedOptions } from './args.js';
import { REGISTRY_OPTIONS, resolveRegistry } from './registry-options.js';
import { formatReport } from './report.js';

export const MONITOR_OPTIONS: readonly OptionSpec[] = [
  ...REGISTRY_OPTIONS,
  { name: 'source', type: 'string', repeatable: true, valueName: 'NAME', description: 'registry kind to read: hypivisor (the default)' },
  { name: 'interval', type: 'number', valueName: 'SECONDS', description: 'liveness probe interval (default 0.25); every other cadence scales with it' },
  { name: 'pending-ttl', type: 'number', valueName: 'SECONDS', description: 'age after which a pending-* entry is a straggler (default 120)' },
  { name: 'host-alias', type: 'string', repeatable: true, valueName: 'NAME', description: 'another name of this host (repeatable)' },
  { name: 'read-only', type: 'boolean', description: 'never evict: eviction keys explain themselves instead' },
  { name: 'no-color', type: 'boolean', description: 'no colours (also NO_COLOR=1); markers keep verdicts readable' },
  { name: 'help', type: 'boolean', description: 'show this help' },
];

const DEFAULT_INTERVAL_S = 0.25;

export function buildMonitor(options: ParsedOptions): { engine: Engine; readOnly: boolean } {
  const kinds = (options.source as string[] | undefined) ?? ['hypivisor'];
  for (const k of kinds) if (k !== 'hypivisor') throw new UsageError(`unknown --source "${k}" (this release reads: hypivisor)`);
  const target = resolveRegistry({
    registry: options.registry as string | undefined,
    tokenFile: options['token-file'] as string | undefined,
    insecure: options.insecure as boolean | undefined,
    caFile: options['ca-file'] as string | undefined,
    maxPayload: options['max-payload'] as number | undefined,
  });
  const interval = (options.interval as number | undefined) ?? DEFAULT_INTERVAL_S;
  if (interval < 0.05 || interval > 60) throw new UsageError('--interval needs a number of seconds from 0.05 to 60');
  const ttl = options['pending-ttl'] as number | undefined;
  if (ttl !== undefined && ttl <= 0) throw new UsageError('--pending-ttl needs a positive number of seconds');
  const sources: Source[] = [new HypivisorSource({ url: target.url, token: target.token, ca: target.ca, ...(target.maxPayload ? { maxPayload: target.maxPayload } : {}) })];
  const readOnly = options['read-only'] === true;
  const engine = createEngine({
    sources,
    hostName: hostname(),
    hostAliases: (options['host-alias'] as string[] | undefined) ?? [],
    ...(ttl !== undefined ? { pendingTtlMs: ttl * 1000 } : {}),
    intervalScale: interval / DEFAULT_INTERVAL_S,
    readOnly,
  });
  return { engine, readOnly };
}

export function watchUsage(): string {
  return [
    'ghostwatch watch — the live monitor (the default command in a terminal)',
    '',
    'Usage: ghostwatch [watch] [options]',
    '',
    'Options:',
    formatOptions(MONITOR_OPTIONS),
    '',
    'Keys: j/k move, Enter details, / filter, p problems only, < > sort, r reverse, Space mark,',
    'a mark all problems, U unmark, d evict (asks first), X evict all problems, Tab claims, ? help, q quit.',
    'Without a terminal it prints one report, like `ghostwatch check`.',
    '',
    'Examples:',
    '  ghostwatch',
    '  ghostwatch --registry ws://127.0.0.1:31415/ws --read-only',
    '  HYPI_TOKEN=... ghostwatch --registry wss://registry.example.com/ws --ca-file ca.pem',
  ].join('\n');
}

export async function watchCommand(argv: readonly string[]): Promise<number> {
  const { options, positionals } = parseArgs(argv, MONITOR_OPTIONS);
  if (options.help) {
    process.stdout.write(`${watchUsage()}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const { engine, readOnly } = buildMonitor(options);
  engine.start();
  if (!process.stdout.isTTY || !process.stdin.isTTY) return printOnce(engine);

  let resolveDone: () => void = () => {};
  const done = new Promise<void>((r) => (resolveDone = r));
  // The alternate screen first: Ink's first frame must land on it, not on the shell's screen.
  let app: ReturnType<typeof render> | undefined;
  const screen = enterFullscreen(process.stdout, () => app?.unmount());
  app = render(
    createElement(App, { engine, readOnly, home: homedir(), onQuit: () => resolveDone() }),
    // Our keymap owns Ctrl-C; Ink patching console would garble the alternate screen. Ink 6.8's
    // incremental mode starts each redraw one row low after a frame that ends in a newline (every
    // frame shorter than the pane), so frames stacked: the standard mode erases and redraws in one
    // write, and writes nothing at all when the frame did not change.
    { exitOnCtrlC: false, patchConsole: false, maxFps: 30 },
  );
  await done;
  screen.restore();
  await engine.stop();
  return 0;
}

async function printOnce(engine: Engine): Promise<number> {
  const snap = await engine.settled(10_000);
  await engine.stop();
  process.stdout.write(formatReport(snap));
  process.stderr.write('ghostwatch: not a terminal: printed one report instead of the live view\n');
  if (snap.sources.some((s) => s.status !== 'connected')) return 2;
  return snap.problems > 0 ? 1 : 0;
}
