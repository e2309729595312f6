// `ghostwatch` / `ghostwatch watch`: the live monitor. Options are parsed and checked here,
// before anything heavy loads; without a terminal on both ends it prints one check report
// instead (raw mode needs a TTY, and a pipe wants text, not a screen).
import { formatOptions } from './args.js';
import { configPath } from './config.js';
import { commandOptions, MONITOR_OPTIONS, monitorSettings, REGISTRIES_HELP, watchingEveryRegistry } from './settings.js';

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
    ...REGISTRIES_HELP,
    'The monitor keeps watching for the registries not here: one started later appears in the header.',
    '',
    `Defaults for any option can live in ${configPath()} ({"registry": "...", "interval": 0.5, ...});`,
    'flags win over the environment, which wins over the file.',
    '',
    'Examples:',
    '  ghostwatch                                   # every registry on this host',
    '  ghostwatch --registry ws://127.0.0.1:31415/ws --read-only',
    '  HYPI_TOKEN=... ghostwatch --registry wss://registry.example.com/ws --ca-file ca.pem',
    '  ghostwatch --source agentctl --source claude',
    '  ghostwatch --source hypivisor,agentctl,claude',
    '  ghostwatch --source claude --claude-dir ~/.claude --claude-dir ~/.claude-work',
  ].join('\n');
}

export async function watchCommand(argv: readonly string[]): Promise<number> {
  const options = commandOptions(argv, MONITOR_OPTIONS, watchUsage);
  if (!options) return 0;
  const settings = watchingEveryRegistry(monitorSettings(options));
  const { runMonitor } = await importWithoutFetch(() => import('./monitor.js'));
  return runMonitor(settings, options.warnings);
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
