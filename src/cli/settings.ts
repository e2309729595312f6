// The one home of the monitor's settings: which options the reading commands take, and how
// flags, the environment and the config file resolve, once, into one typed value. Precedence:
// flags, then the environment (HYPIVISOR_WS, HYPI_TOKEN, NO_COLOR), then the file. No Ink, no
// engine here: status, check and reap load only this before they know what to run.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs, UsageError, type OptionSpec, type ParsedOptions } from './args.js';
import { configPath, loadConfig } from './config.js';
import { sanitize } from '../core/sanitize.js';
import type { SshHostConfig } from '../os/ssh-command.js';
import { REGISTRY_OPTIONS, resolveRegistry, type RegistryTarget } from './registry-options.js';
import { defaultClaudePaths, isDir, type ClaudePaths } from '../sources/claude/paths.js';

export const MONITOR_OPTIONS: readonly OptionSpec[] = [
  ...REGISTRY_OPTIONS,
  {
    name: 'source',
    type: 'string',
    repeatable: true,
    valueName: 'NAME',
    description: 'read only this registry: hypivisor, agentctl, claude; repeat for several (default: every one found on this host; one named is required: not there = exit 2)',
  },
  { name: 'agentctl-socket', type: 'string', valueName: 'PATH', description: 'agentctl daemon socket (default ~/.agentctl/agentctl.sock; its files are read beside it)' },
  { name: 'claude-dir', type: 'string', repeatable: true, valueName: 'PATH', description: 'a Claude Code folder; repeat for several profiles (default $CLAUDE_CONFIG_DIR and ~/.claude)' },
  { name: 'claude-sessions-dir', type: 'string', valueName: 'PATH', description: "the claim manager's session folder (default ~/.claude-sessions)" },
  { name: 'interval', type: 'number', valueName: 'SECONDS', description: 'liveness probe interval (default 0.25); every other cadence scales with it' },
  { name: 'pending-ttl', type: 'number', valueName: 'SECONDS', description: 'age after which a pending-* entry is a straggler (default 120)' },
  { name: 'host-alias', type: 'string', repeatable: true, valueName: 'NAME', description: 'another name of this host (repeatable)' },
  { name: 'ssh', type: 'string', repeatable: true, valueName: 'MACHINE=DEST', description: 'verify the entries of MACHINE over ssh to DEST (repeatable; config key "hosts")' },
  { name: 'ssh-all', type: 'boolean', description: 'verify every machine over ssh, its name as the destination (~/.ssh/config aliases apply)' },
  { name: 'probe-remote-ports', type: 'boolean', description: "connect to other hosts' entries at machine:port from here: refused is a ghost, a timeout unverified (bounded; not for ssh-verified hosts)" },
  { name: 'kill-grace', type: 'number', valueName: 'SECONDS', description: "ending a dead agent's leftovers (K, reap --leftovers): how long SIGTERM gets before SIGKILL (default 5)" },
  { name: 'read-only', type: 'boolean', description: 'never evict nor signal: eviction keys explain themselves instead' },
  { name: 'no-color', type: 'boolean', description: 'no colours (also NO_COLOR=1); markers keep verdicts readable' },
  { name: 'help', type: 'boolean', description: 'show this help' },
];

export const DEFAULT_INTERVAL_S = 0.25;

/** What every reading command's --help says about which registries it reads. */
export const REGISTRIES_HELP: readonly string[] = [
  'Registries: with no --source or --registry (flag or config file), every one on this host is read:',
  'hypivisor at $HYPIVISOR_WS or ws://localhost:31415/ws if it answers, agentctl if its socket or files',
  'are in ~/.agentctl, Claude Code\'s folders ($CLAUDE_CONFIG_DIR and ~/.claude), claude-view\'s snapshot',
  'and ~/.claude-sessions if they exist. What is not there is named ("not here"), not an error. A',
  'registry named with --source or --registry must answer: not reachable is an error (exit 2).',
];

export const SOURCE_KINDS = ['hypivisor', 'agentctl', 'claude'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

function isSourceKind(name: string): name is SourceKind {
  return SOURCE_KINDS.some((k) => k === name);
}

/** A registry looked for on this host and not there: its name and where it was looked for. */
export interface LookedFor {
  readonly name: string;
  readonly where: string;
}

export interface MonitorSettings {
  /** Which registries to read, in the order given. */
  readonly kinds: readonly SourceKind[];
  /** The hypivisor registry, when it is one of them. */
  readonly target?: RegistryTarget | undefined;
  readonly agentctlSocket: string;
  /** The Claude Code folders and the claim manager's, when `claude` is one of the kinds. */
  readonly claude: ClaudePaths;
  /**
   * Set when no registry was named (no --source, no --registry, neither in the config file): every
   * registry found on this host is read, and one not there is information, not an error. `absent`:
   * what was looked for and not found. Undefined: the registries named are read, and must answer.
   */
  readonly discovery?: { readonly absent: readonly LookedFor[]; readonly claude: ClaudePaths } | undefined;
  /** Multiplies every probe cadence (1 = the defaults). */
  readonly intervalScale: number;
  readonly pendingTtlMs?: number | undefined;
  readonly hostAliases: readonly string[];
  readonly readOnly: boolean;
  /** The machines verified over ssh, and how to reach each. Only these are contacted. */
  readonly sshHosts: readonly SshHostConfig[];
  /** Every other machine too, with its own name as the destination. */
  readonly sshAll: boolean;
  /** Connect to each remote entry's machine:port from this host (--probe-remote-ports). */
  readonly probeRemotePorts: boolean;
  /** Where evictions are audited; default $XDG_STATE_HOME/ghostwatch/evictions.jsonl. */
  readonly auditLogPath?: string | undefined;
  /** Where evicted session files go; default $XDG_STATE_HOME/ghostwatch/trash. */
  readonly trashDir?: string | undefined;
  /** K and `reap --leftovers`: SIGTERM to SIGKILL, ms (default 5 s). */
  readonly killGraceMs?: number | undefined;
  /** Where what agents started is kept between runs; default $XDG_STATE_HOME/ghostwatch/descendants.json. */
  readonly leftoverMemoryPath?: string | undefined;
}

/**
 * Typed reads of resolved options. parseArgs and loadConfig already checked every value against
 * its spec; a value of another type here is a programming error, said as such, never cast away.
 */
export class CommandOptions {
  /**
   * `fromFile`: the keys whose value came from the config file at `configFile`, for error messages.
   * `givenNames`: the options a flag or the file named (the environment may have overridden the file's value).
   * `warnings`: lines already said on stderr that a screen should say too (a config file not used).
   */
  constructor(
    private readonly values: ParsedOptions,
    private readonly fromFile: ReadonlySet<string> = new Set(),
    private readonly configFile = 'the config file',
    private readonly givenNames: ReadonlySet<string> = new Set(Object.keys(values).filter((k) => values[k] !== undefined)),
    readonly warnings: readonly string[] = [],
  ) {}

  /** Whether a flag or the config file named this option. */
  given(name: string): boolean {
    return this.givenNames.has(name);
  }

  /** How to name an option in an error: the config file's key when its value came from there, else the flag. */
  label(name: string): string {
    return this.fromFile.has(name) ? `"${name}" in ${this.configFile}` : `--${name}`;
  }

  string(name: string): string | undefined {
    const v = this.values[name];
    if (v === undefined || typeof v === 'string') return v;
    throw new TypeError(`--${name} is not a string option`);
  }

  number(name: string): number | undefined {
    const v = this.values[name];
    if (v === undefined || typeof v === 'number') return v;
    throw new TypeError(`--${name} is not a number option`);
  }

  list(name: string): string[] | undefined {
    const v = this.values[name];
    if (v === undefined || Array.isArray(v)) return v;
    throw new TypeError(`--${name} is not a repeatable option`);
  }

  flag(name: string): boolean {
    return this.values[name] === true;
  }
}

/**
 * Flags win over the environment, which wins over the file. The registry's variables are read
 * by resolveRegistry; so a file value is only used where no flag and no variable says otherwise.
 */
export function withConfig(flags: ParsedOptions, file: ParsedOptions, env: NodeJS.ProcessEnv = process.env): ParsedOptions {
  const merged: ParsedOptions = { ...file };
  if (env.HYPIVISOR_WS) delete merged.registry;
  if (env.HYPI_TOKEN) delete merged['token-file'];
  for (const [k, v] of Object.entries(flags)) if (v !== undefined) merged[k] = v;
  return merged;
}

/**
 * A command's options: its flags, over the environment, over the config file. Prints the usage
 * and returns undefined for --help; a stray positional argument is a usage error. A config file
 * that is not used (another user's, a symlink, writable by others) is said once through `warn`.
 */
export function commandOptions(
  argv: readonly string[],
  specs: readonly OptionSpec[],
  usage: () => string,
  env: NodeJS.ProcessEnv = process.env,
  warn: (line: string) => void = (line) => void process.stderr.write(`ghostwatch: warning: ${line}\n`),
): CommandOptions | undefined {
  const { options, positionals } = parseArgs(argv, specs);
  if (options.help) {
    process.stdout.write(`${usage()}\n`);
    return undefined;
  }
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const path = configPath(env);
  const { options: file, ignored } = loadConfig(specs, path);
  if (ignored !== undefined) warn(ignored);
  const merged = withConfig(options, file, env);
  const fromFile = new Set(Object.keys(file).filter((k) => merged[k] === file[k] && options[k] === undefined));
  // The launcher turned --no-color and NO_COLOR into FORCE_COLOR=0; the file's "no-color" must
  // do the same before Ink (and its chalk) are first imported, which happens after this.
  if (merged['no-color'] === true) env.FORCE_COLOR = '0';
  const given = new Set([...Object.keys(options).filter((k) => options[k] !== undefined), ...Object.keys(file)]);
  return new CommandOptions(merged, fromFile, path, given, ignored === undefined ? [] : [ignored]);
}

/** The monitor's settings from resolved options: what status, check, reap and the live view share. */
export function monitorSettings(options: CommandOptions, env: NodeJS.ProcessEnv = process.env, home: string = homedir()): MonitorSettings {
  const named = options.given('source') || options.given('registry');
  const kinds: SourceKind[] = [];
  // --registry alone names hypivisor, as it always did.
  for (const k of options.list('source') ?? (named ? ['hypivisor'] : [])) {
    for (const one of k.split(',').map((x) => x.trim()).filter(Boolean)) {
      if (!isSourceKind(one)) throw new UsageError(`unknown ${options.label('source')} "${one}" (choose from ${SOURCE_KINDS.join(', ')})`);
      if (!kinds.includes(one)) kinds.push(one);
    }
  }
  if (named && kinds.length === 0) throw new UsageError(`${options.label('source')} needs a registry: hypivisor, agentctl or claude`);
  const agentctlSocket = options.string('agentctl-socket') ?? join(home, '.agentctl', 'agentctl.sock');
  const claudeDirs = options.list('claude-dir');
  const defaults = defaultClaudePaths(home, env);
  const claude: ClaudePaths = {
    claudeDirs: claudeDirs ? unique(claudeDirs.map((d) => resolve(d))) : defaults.claudeDirs,
    claimsDir: options.string('claude-sessions-dir') ?? defaults.claimsDir,
  };
  const found = named ? undefined : discover(agentctlSocket, claude);
  if (found) kinds.push(...found.kinds);
  // The hypivisor URL and token are resolved (and checked) only when that registry is read.
  const target = kinds.includes('hypivisor')
    ? resolveRegistry(
        {
          registry: options.string('registry'),
          tokenFile: options.string('token-file'),
          insecure: options.flag('insecure'),
          caFile: options.string('ca-file'),
          maxPayload: options.number('max-payload'),
          label: (name) => options.label(name),
        },
        env,
      )
    : undefined;
  const interval = options.number('interval') ?? DEFAULT_INTERVAL_S;
  if (interval < 0.05 || interval > 60) throw new UsageError(`${options.label('interval')} needs a number of seconds from 0.05 to 60`);
  const ttl = options.number('pending-ttl');
  if (ttl !== undefined && ttl <= 0) throw new UsageError(`${options.label('pending-ttl')} needs a positive number of seconds`);
  const grace = options.number('kill-grace');
  if (grace !== undefined && (grace < 0 || grace > 600)) throw new UsageError(`${options.label('kill-grace')} needs a number of seconds from 0 to 600`);
  return {
    kinds,
    target,
    agentctlSocket,
    claude: found?.claude ?? claude,
    ...(found ? { discovery: { absent: found.absent, claude } } : {}),
    intervalScale: interval / DEFAULT_INTERVAL_S,
    pendingTtlMs: ttl === undefined ? undefined : ttl * 1000,
    hostAliases: options.list('host-alias') ?? [],
    readOnly: options.flag('read-only'),
    sshHosts: sshHosts(options),
    sshAll: options.flag('ssh-all'),
    probeRemotePorts: options.flag('probe-remote-ports'),
    ...(grace !== undefined ? { killGraceMs: grace * 1000 } : {}),
  };
}

/**
 * The live monitor, with no registry named: every registry this host may have, those not there
 * too, each watched quietly (its state "absent"), so one started later appears without a restart.
 */
export function watchingEveryRegistry(settings: MonitorSettings): MonitorSettings {
  if (!settings.discovery) return settings;
  return { ...settings, kinds: [...SOURCE_KINDS], claude: settings.discovery.claude, discovery: { absent: [], claude: settings.discovery.claude } };
}

function unique(paths: readonly string[]): string[] {
  return paths.filter((p, i) => paths.indexOf(p) === i);
}

/**
 * No registry named: what this host has. hypivisor always (whether it answers is known only by
 * asking; the source says "absent" when nothing does); agentctl when its socket or its files are
 * there; each Claude Code folder, claude-view's snapshot and the claim manager's folder that exist.
 */
function discover(agentctlSocket: string, claude: ClaudePaths): { kinds: SourceKind[]; claude: ClaudePaths; absent: LookedFor[] } {
  const kinds: SourceKind[] = ['hypivisor'];
  const absent: LookedFor[] = [];
  const agentctlDir = dirname(agentctlSocket);
  if ([agentctlSocket, join(agentctlDir, 'state.json'), join(agentctlDir, 'locks.json')].some((p) => existsSync(p))) kinds.push('agentctl');
  else absent.push({ name: 'agentctl', where: agentctlSocket });
  const claudeDirs = claude.claudeDirs.filter((dir) => isDir(dir));
  for (const dir of claude.claudeDirs) if (!claudeDirs.includes(dir)) absent.push({ name: 'claude', where: dir });
  const snapshotDirs = claudeDirs.filter((dir) => existsSync(join(dir, 'live-monitor-pids.json')));
  for (const dir of claudeDirs) if (!snapshotDirs.includes(dir)) absent.push({ name: 'claude-view', where: join(dir, 'live-monitor-pids.json') });
  const claimsDir = claude.claimsDir !== undefined && isDir(claude.claimsDir) ? claude.claimsDir : undefined;
  if (claude.claimsDir !== undefined && claimsDir === undefined) absent.push({ name: 'claude-sessions', where: claude.claimsDir });
  if (claudeDirs.length > 0 || claimsDir !== undefined) kinds.push('claude');
  return { kinds, claude: { claudeDirs, claimsDir, snapshotDirs }, absent };
}

/** A machine name or destination: no spaces, no control or format characters (nothing a terminal or ssh would act on). */
const PLAIN = /^[^\s\p{Cc}\p{Cf}\p{Zl}\p{Zp}=]+$/u;
const PLAIN_DEST = /^[^\s\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+$/u;

/** `--ssh MACHINE=DEST` values (the config file's "hosts" arrive as these too); a machine given twice is an error. */
function sshHosts(options: CommandOptions): SshHostConfig[] {
  const hosts: SshHostConfig[] = [];
  for (const value of options.list('ssh') ?? []) {
    const eq = value.indexOf('=');
    const machine = eq < 0 ? '' : value.slice(0, eq).trim();
    const dest = eq < 0 ? '' : value.slice(eq + 1).trim();
    const label = options.label('ssh');
    if (machine === '' || dest === '') throw new UsageError(`${label} needs MACHINE=DEST, e.g. build-42=me@build-42.internal (got "${sanitize(value, 80)}")`);
    if (!PLAIN.test(machine)) throw new UsageError(`${label}: the machine "${sanitize(machine, 80)}" may not contain spaces, control characters or "="`);
    // ssh is given `--` before the destination; still, neither it nor its host (after ssh:// or user@) may read as an option.
    if (/^-|^ssh:\/\/-|@-/i.test(dest)) throw new UsageError(`${label}: the destination of ${sanitize(machine, 80)} may not start with "-"`);
    if (!PLAIN_DEST.test(dest)) throw new UsageError(`${label}: the destination of ${sanitize(machine, 80)} may not contain spaces or control characters`);
    if (hosts.some((h) => h.machine.toLowerCase() === machine.toLowerCase())) throw new UsageError(`${label}: ${sanitize(machine, 80)} is given twice`);
    hosts.push({ machine, dest });
  }
  return hosts;
}
