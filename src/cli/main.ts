// Entry point of the built CLI: picks the command, turns usage mistakes into one line + exit 2.
import { readFileSync } from 'node:fs';
import { formatOptions, parseArgs, UsageError, type OptionSpec } from './args.js';
import { serveCommand } from './serve.js';

const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  { name: 'help', type: 'boolean', description: 'show this help' },
  { name: 'version', type: 'boolean', description: 'print the version' },
  { name: 'no-color', type: 'boolean', description: 'no colours (also: NO_COLOR=1)' },
];

export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export function usage(): string {
  return [
    'ghostwatch — find and evict dead sessions in agent registries',
    '',
    'Usage: ghostwatch [options] [command]',
    '',
    'Commands:',
    '  serve     run the embedded registry (hypivisor protocol + claims); see `ghostwatch serve --help`',
    '',
    'Options:',
    formatOptions(GLOBAL_OPTIONS),
    '',
    'The registry client, the live monitor and the other commands arrive in the next releases;',
    'see README.md for what is in this one.',
  ].join('\n');
}

export async function main(argv: readonly string[]): Promise<number> {
  try {
    // Global options are all flags, so the first bare word is the command; the rest is its own.
    const at = argv.findIndex((arg) => !arg.startsWith('-'));
    if (at !== -1 && argv[at] === 'serve') {
      const globals = parseArgs(argv.slice(0, at), GLOBAL_OPTIONS).options;
      if (globals.version) {
        process.stdout.write(`${version()}\n`);
        return 0;
      }
      return await serveCommand(globals.help ? ['--help'] : argv.slice(at + 1));
    }
    const { options, positionals } = parseArgs(argv, GLOBAL_OPTIONS);
    if (options.version) {
      process.stdout.write(`${version()}\n`);
      return 0;
    }
    if (options.help || positionals.length === 0) {
      process.stdout.write(`${usage()}\n`);
      return 0;
    }
    throw new UsageError(`unknown command "${positionals[0]}" (try --help)`);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`ghostwatch: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

process.exitCode = await main(process.argv.slice(2));
