// The config file: $XDG_CONFIG_HOME/ghostwatch/config.json (default ~/.config/...). Its keys are
// the long option names, e.g. {"registry": "ws://...", "interval": 0.5, "host-alias": ["box"]}.
// Precedence: flags, then the environment (HYPIVISOR_WS, HYPI_TOKEN, NO_COLOR), then the file.
import { fsErrorText, readBoundedSync } from '../os/safe-file.js';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { parseArgs, UsageError, type OptionSpec, type ParsedOptions } from './args.js';

export function configPath(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const base = env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : join(home, '.config');
  return join(base, 'ghostwatch', 'config.json');
}

/** Keys that only make sense on the command line of one run. */
/** A config file is a few hundred bytes; past this it is not one. */
const MAX_CONFIG_BYTES = 1024 * 1024;
const NOT_IN_FILE = new Set(['help', 'version', 'yes', 'dry-run', 'json', 'format']);

/** Read and check the file against the options a command takes. A missing file is no config. */
export function loadConfig(specs: readonly OptionSpec[], path: string = configPath()): ParsedOptions {
  let text: string;
  try {
    text = readBoundedSync(path, MAX_CONFIG_BYTES).toString('utf8');
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return {};
    throw new UsageError(`${path}: cannot read it (${fsErrorText(error)})`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${path}: not valid JSON (${(error as Error).message})`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new UsageError(`${path}: must hold one JSON object`);
  const byName = new Map(specs.map((s) => [s.name, s]));
  const out: ParsedOptions = {};
  for (const [key, value] of Object.entries(data)) {
    const spec = byName.get(key);
    if (!spec || NOT_IN_FILE.has(key)) throw new UsageError(`${path}: unknown key "${key}"`);
    out[key] = checkValue(path, spec, value);
  }
  return out;
}

function checkValue(path: string, spec: OptionSpec, value: unknown): string | number | boolean | string[] {
  const where = `${path}: "${spec.name}"`;
  if (spec.repeatable) {
    const list = Array.isArray(value) ? value : [value];
    if (!list.every((v) => typeof v === 'string')) throw new UsageError(`${where} must be a string or a list of strings`);
    return list as string[];
  }
  if (spec.type === 'boolean') {
    if (typeof value !== 'boolean') throw new UsageError(`${where} must be true or false (got ${JSON.stringify(value)})`);
    return value;
  }
  if (spec.type === 'number') {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new UsageError(`${where} must be a non-negative number (got ${JSON.stringify(value)})`);
    }
    return value;
  }
  if (typeof value !== 'string') throw new UsageError(`${where} must be a string (got ${JSON.stringify(value)})`);
  return value;
}

/**
 * Flags win over the environment, which wins over the file. The environment is read later by
 * resolveRegistry; so a file value is only used where no flag and no environment variable says
 * otherwise.
 */
export function withConfig(flags: ParsedOptions, file: ParsedOptions, env: NodeJS.ProcessEnv = process.env): ParsedOptions {
  const merged: ParsedOptions = { ...file };
  if (env.HYPIVISOR_WS) delete merged.registry;
  if (env.HYPI_TOKEN) delete merged['token-file'];
  for (const [k, v] of Object.entries(flags)) if (v !== undefined) merged[k] = v;
  return merged;
}

/**
 * A command's options: its flags, over the config file. Prints the usage and returns undefined
 * for --help; a stray positional argument is a usage error.
 */
export function commandOptions(argv: readonly string[], specs: readonly OptionSpec[], usage: () => string): ParsedOptions | undefined {
  const { options, positionals } = parseArgs(argv, specs);
  if (options.help) {
    process.stdout.write(`${usage()}\n`);
    return undefined;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const merged = withConfig(options, loadConfig(specs));
  // The launcher turned --no-color and NO_COLOR into FORCE_COLOR=0; the file's "no-color" must
  // do the same before Ink (and its chalk) are first imported, which happens after this.
  if (merged['no-color'] === true) process.env.FORCE_COLOR = '0';
  return merged;
}
