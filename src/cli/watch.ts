// `ghostwatch` / `ghostwatch watch`: the live monitor. Options are parsed and checked here,
// before anything heavy loads; without a terminal on both ends it prints one check report
// instead (raw mode needs a TTY, and a pipe wants text, not a screen).
import { homedir } from 'node:os';
import { join } from 'node:path';
import { formatOptions, UsageError, type OptionSpec, type ParsedOptions } from './args.js';
import { commandOptions, configPath } from './config.js';
import type { MonitorSettings } from './engine-setup.js';
import { REGISTRY_OPTIONS, resolveRegistry } from './registry-options.js';

export const MONITOR_OPTIONS: readonly OptionSpec[] = [
  ...REGISTRY_OPTIONS,
  { name: 'source', type: 'string', repeatable: true, valueName: 'NAME', description: 'registry to read: hypivisor (default), agentctl, claude; repeat for several' },
  { name: 'agentctl-socket', type: 'string', valueName: 'PATH', description: 'agentctl daemon socket (default ~/.agentctl/agentctl.sock; its files are read beside it)' },
  { name: 'claude-dir', type: 'string', valueName: 'PATH', description: 'Claude Code folder for --source claude (default ~/.claude)' },
  { name: 'claude-sessions-dir', type: 'string', valueName: 'PATH', description: 'claim-tracking session folder for --source claude (default ~/.claude-sessions)' },
  { name: 'interval', type: 'number', valueName: 'SECONDS', description: 'liveness probe interval (default 0.25); every other cadence scales with it' },
  { name: 'pending-ttl', type: 'number', valueName: 'SECONDS', description: 'age after which a pending-* entry is a straggler (default 120)' },
  { name: 'host-alias', type: 'string', repeatable: true, valueName: 'NAME', description: 'another name of this host (repeatable)' },
  { name: 'read-only', type: 'boolean', description: 'never evict: eviction keys explain themselves instead' },
  { name: 'no-color', type: 'boolean', description: 'no colours (also NO_COLOR=1); markers keep verdicts readable' },
  { name: 'help', type: 'boolean', description: 'show this help' },
];

const DEFAULT_INTERVAL_S = 0.25;

export const SOURCE_KINDS = ['hypivisor', 'agentctl', 'claude'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

export function monitorSettings(options: ParsedOptions): MonitorSettings {
  const kinds: SourceKind[] = [];
  for (const k of (options.source as string[] | undefined) ?? ['hypivisor']) {
    for (const one of k.split(',').map((x) => x.trim()).filter(Boolean)) {
      if (!(SOURCE_KINDS as readonly string[]).includes(one)) throw new UsageError(`unknown --source "${one}" (choose from ${SOURCE_KINDS.join(', ')})`);
      if (!kinds.includes(one as SourceKind)) kinds.push(one as SourceKind);
    }
  }
  if (kinds.length === 0) throw new UsageError('--source needs a registry: hypivisor, agentctl or claude');
  // The hypivisor URL and token are resolved (and checked) only when that registry is read.
  const target = kinds.includes('hypivisor')
    ? resolveRegistry({
        registry: options.registry as string | undefined,
        tokenFile: options['token-file'] as string | undefined,
        insecure: options.insecure as boolean | undefined,
        caFile: options['ca-file'] as string | undefined,
        maxPayload: options['max-payload'] as number | undefined,
      })
    : undefined;
  const interval = (options.interval as number | undefined) ?? DEFAULT_INTERVAL_S;
  if (interval < 0.05 || interval > 60) throw new UsageError('--interval needs a number of seconds from 0.05 to 60');
  const ttl = options['pending-ttl'] as number | undefined;
  if (ttl !== undefined && ttl <= 0) throw new UsageError('--pending-ttl needs a positive number of seconds');
  const home = homedir();
  return {
    kinds,
    target,
    agentctlSocket: (options['agentctl-socket'] as string | undefined) ?? join(home, '.agentctl', 'agentctl.sock'),
    claudeDir: (options['claude-dir'] as string | undefined) ?? join(home, '.claude'),
    claudeSessionsDir: (options['claude-sessions-dir'] as string | undefined) ?? join(home, '.claude-sessions'),
    intervalScale: interval / DEFAULT_INTERVAL_S,
    pendingTtlMs: ttl === undefined ? undefined : ttl * 1000,
    hostAliases: (options['host-alias'] as string[] | undefined) ?? [],
    readOnly: options['read-only'] === true,
  };
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
    `Defaults for any option can live in ${configPath()} ({"registry": "...", "interval": 0.5, ...});`,
    'flags win over the environment, which wins over the file.',
    '',
    'Examples:',
    '  ghostwatch',
    '  ghostwatch --registry ws://127.0.0.1:31415/ws --read-only',
    '  HYPI_TOKEN=... ghostwatch --registry wss://registry.example.com/ws --ca-file ca.pem',
    '  ghostwatch --source agentctl --source claude',
    '  ghostwatch --source hypivisor,agentctl,claude',
  ].join('\n');
}

export async function watchCommand(argv: readonly string[]): Promise<number> {
  const options = commandOptions(argv, MONITOR_OPTIONS, watchUsage);
  if (!options) return 0;
  const settings = monitorSettings(options);
  const { runMonitor } = await importWithoutFetch(() => import('./monitor.js'));
  return runMonitor(settings);
}

/**
 * Ink's layout engine (yoga) carries its WebAssembly inline as a data: URI, and its loader
 * fetch()es that URI when fetch exists: Node then loads its whole fetch stack (~50 ms of start-up)
 * to decode bytes the loader decodes itself when there is no fetch. ghostwatch never uses fetch;
 * it is hidden only while the screen modules are first evaluated.
 */
async function importWithoutFetch<T>(load: () => Promise<T>): Promise<T> {
  const descriptor = Object.getOwnPropertyDescriptor(globalThis, 'fetch');
  if (!descriptor?.configurable) return load();
  Object.defineProperty(globalThis, 'fetch', { value: undefined, configurable: true, writable: true });
  try {
    return await load();
  } finally {
    Object.defineProperty(globalThis, 'fetch', descriptor);
  }
}
