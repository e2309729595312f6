// Entry point of the built CLI: picks the command, turns usage mistakes into one line + exit 2.
// `ghostwatch [options]` with no command is the live monitor (`watch`).
import { readFileSync } from 'node:fs';
import { errorLines, formatOptions, UsageError } from './args.js';
import './locale.js';
import { MONITOR_OPTIONS, REGISTRIES_HELP } from './settings.js';
import { watchCommand } from './watch.js';

interface Command {
  readonly summary: string;
  run(argv: readonly string[]): Promise<number>;
}

const COMMANDS: Readonly<Record<string, Command>> = {
  watch: { summary: 'the live monitor (the default in a terminal)', run: watchCommand },
  // Loaded on use: a command's modules (ws, the server, Ink) cost start-up time for every other one.
  check: { summary: 'one pass: report, exit 0 no problems, 1 problems, 2 error', run: async (argv) => (await import('./check.js')).checkCommand(argv) },
  reap: { summary: 'evict every problem (re-verified, audited); for cron', run: async (argv) => (await import('./reap.js')).reapCommand(argv) },
  status: { summary: 'one short line for a tmux status bar', run: async (argv) => (await import('./status.js')).statusCommand(argv) },
  restore: { summary: 'put a file-backed session that eviction moved to the trash back', run: async (argv) => (await import('./restore.js')).restoreCommand(argv) },
  serve: { summary: 'run the embedded registry (hypivisor protocol + claims)', run: async (argv) => (await import('./serve.js')).serveCommand([...argv]) },
  demo: { summary: 'the embedded registry, a cast of real agents in every failure mode, and the monitor', run: async (argv) => (await import('./demo.js')).demoCommand([...argv]) },
};

export function version(): string {
  // dist/src/cli/main.js (unbundled) or dist/bundle/main.js (the launcher's): the package root is above either.
  for (const up of ['../../../package.json', '../../package.json']) {
    try {
      const pkg: unknown = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8'));
      if (typeof pkg === 'object' && pkg !== null && 'name' in pkg && pkg.name === 'ghostwatch' && 'version' in pkg) return String(pkg.version);
    } catch {
      // not this one
    }
  }
  return 'unknown';
}

export function usage(): string {
  const names = Object.keys(COMMANDS);
  const width = Math.max(...names.map((n) => n.length));
  return [
    'ghostwatch — find and evict dead sessions in agent registries',
    '',
    'Usage: ghostwatch [command] [options]',
    '',
    'Commands:',
    ...names.map((n) => `  ${n.padEnd(width)}  ${COMMANDS[n]!.summary}; \`ghostwatch ${n} --help\``),
    '',
    'Options of the live monitor (also: ghostwatch watch --help):',
    formatOptions([...MONITOR_OPTIONS, { name: 'version', type: 'boolean', description: 'print the version' }]),
    '',
    ...REGISTRIES_HELP,
  ].join('\n');
}

/** Options every command takes, so they may be given before the command as well as after it. */
const EVERYWHERE: ReadonlySet<string> = new Set(['--no-color']);

export async function main(argv: readonly string[]): Promise<number> {
  try {
    if (argv.length === 1 && argv[0] === '--version') {
      process.stdout.write(`${version()}\n`);
      return 0;
    }
    if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) {
      process.stdout.write(`${usage()}\n`);
      return 0;
    }
    // Options every command takes may come before the command too: `ghostwatch --no-color check`.
    let at = 0;
    while (at < argv.length && EVERYWHERE.has(argv[at]!)) at++;
    const first = argv[at];
    if (first !== undefined && !first.startsWith('-')) {
      const command = COMMANDS[first];
      if (!command) throw new UsageError(`unknown command "${first}" (try --help)`);
      return await command.run([...argv.slice(at + 1), ...argv.slice(0, at)]);
    }
    return await watchCommand(argv);
  } catch (error) {
    process.stderr.write(errorLines(error));
    return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
