// The config file: $XDG_CONFIG_HOME/ghostwatch/config.json (default ~/.config/...). Its keys are
// the long option names, e.g. {"registry": "ws://...", "interval": 0.5, "host-alias": ["box"]}.
// How it ranks against flags and the environment is settled in settings.ts. A file another user
// could have written (readOwnFileSync) is not used: the defaults apply, and one line says why.
import { sanitize } from '../core/sanitize.js';
import { fsErrorText, readOwnFileSync, UnsafePath } from '../os/safe-file.js';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { xdgHome } from '../os/state-dir.js';
import { UsageError, type OptionSpec, type ParsedOptions } from './args.js';

export function configPath(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const base = xdgHome(env, 'XDG_CONFIG_HOME') ?? join(home, '.config');
  return join(base, 'ghostwatch', 'config.json');
}

/** A config file is a few hundred bytes; past this it is not one. */
const MAX_CONFIG_BYTES = 1024 * 1024;
/** Keys that only make sense on the command line of one run. */
const NOT_IN_FILE = new Set(['help', 'version', 'yes', 'dry-run', 'json', 'format']);

/** The file's options, and, when a file was there and not used, the one line that says why. */
export interface ConfigFile {
  readonly options: ParsedOptions;
  readonly ignored?: string | undefined;
}

/**
 * Read and check the file against the options a command takes. A missing file is no config; so
 * is one that is not ours (`ignored` says why). A file of ours that is malformed is a UsageError.
 */
export function loadConfig(specs: readonly OptionSpec[], path: string = configPath()): ConfigFile {
  let text: string;
  try {
    text = readOwnFileSync(path, MAX_CONFIG_BYTES).toString('utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return { options: {} };
    if (error instanceof UnsafePath) return { options: {}, ignored: sanitize(`the config file ${path} is not used: ${error.message}; defaults apply`, 300) };
    throw new UsageError(`${path}: cannot read it (${fsErrorText(error)})`);
  }
  return { options: parseConfig(specs, path, text) };
}

function parseConfig(specs: readonly OptionSpec[], path: string, text: string): ParsedOptions {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${path}: not valid JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new UsageError(`${path}: must hold one JSON object`);
  const byName = new Map(specs.map((s) => [s.name, s]));
  const out: ParsedOptions = {};
  for (const [key, value] of Object.entries(data)) {
    if (key === 'hosts' && byName.has('ssh')) {
      out.ssh = [...(Array.isArray(out.ssh) ? out.ssh : []), ...hostsToSsh(path, value)];
      continue;
    }
    if (key === 'ssh' && byName.has('ssh')) {
      out.ssh = [...checkValue(path, byName.get('ssh') as OptionSpec, value) as string[], ...(Array.isArray(out.ssh) ? out.ssh : [])];
      continue;
    }
    const spec = byName.get(key);
    if (!spec || NOT_IN_FILE.has(key)) throw new UsageError(`${path}: unknown key "${key}"`);
    out[key] = checkValue(path, spec, value);
  }
  return out;
}

/**
 * `{"hosts": {"build-42": {"ssh": "me@build-42.internal", "port": 22}}}` as `--ssh` values
 * (MACHINE=DEST; a port makes the destination an ssh:// URI, which OpenSSH takes as is).
 */
function hostsToSsh(path: string, value: unknown): string[] {
  const where = (key: string): string => `${path}: "${key}"`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError(`${where('hosts')} must be an object of machine names`);
  const out: string[] = [];
  for (const [machine, host] of Object.entries(value)) {
    const key = `hosts.${machine}`;
    // It becomes MACHINE=DEST: a machine with "=" would be read as another machine and destination.
    if (machine === '' || machine.includes('=')) throw new UsageError(`${path}: "hosts" has a machine name that is empty or contains "=": ${JSON.stringify(machine)}`);
    if (typeof host !== 'object' || host === null || Array.isArray(host)) throw new UsageError(`${where(key)} must be an object like {"ssh": "user@host", "port": 22}`);
    const { ssh, port, ...rest } = host as Record<string, unknown>;
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) throw new UsageError(`${path}: unknown key "${key}.${extra}"`);
    if (typeof ssh !== 'string' || ssh === '') throw new UsageError(`${where(`${key}.ssh`)} must be an ssh destination such as "me@${machine}"`);
    if (port !== undefined && (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65_535)) {
      throw new UsageError(`${where(`${key}.port`)} must be a port number from 1 to 65535 (got ${JSON.stringify(port)})`);
    }
    out.push(`${machine}=${port === undefined ? ssh : `ssh://${ssh}:${port}`}`);
  }
  return out;
}

function checkValue(path: string, spec: OptionSpec, value: unknown): string | number | boolean | string[] {
  const where = `${path}: "${spec.name}"`;
  if (spec.repeatable) {
    const list: unknown[] = Array.isArray(value) ? value : [value];
    const strings = list.filter((v) => typeof v === 'string');
    if (strings.length !== list.length) throw new UsageError(`${where} must be a string or a list of strings`);
    return strings;
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

function errorCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}
