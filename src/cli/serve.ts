// `ghostwatch serve`: the embedded registry as a long-running command. Runs until SIGINT,
// SIGTERM or SIGHUP, then closes cleanly (clients told, state file flushed) and exits 0.
import { fsErrorText, readBoundedSync } from '../os/safe-file.js';
import { errorCode } from '../os/liveness.js';
import { formatOptions, parseArgs, UsageError, type OptionSpec } from './args.js';
import { CommandOptions } from './settings.js';
import { sanitize } from '../core/sanitize.js';
import {
  DEFAULT_HOST,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_PAYLOAD,
  DEFAULT_PORT,
  DEFAULT_TTL_SECONDS,
  startRegistryServer,
  type RegistryServerOptions,
} from '../server/index.js';

export const SERVE_OPTIONS: readonly OptionSpec[] = [
  { name: 'port', type: 'number', valueName: 'N', description: `port to listen on (default ${DEFAULT_PORT}; 0 = any free port)` },
  { name: 'host', type: 'string', valueName: 'H', description: `address to bind (default ${DEFAULT_HOST})` },
  { name: 'ttl', type: 'number', valueName: 'SECONDS', description: `offline nodes go after this; silent active ones after 3x (default ${DEFAULT_TTL_SECONDS})` },
  { name: 'state-file', type: 'string', valueName: 'PATH', description: 'keep a JSON snapshot here and reload it on start' },
  { name: 'token-file', type: 'string', valueName: 'PATH', description: 'require the token in this file (default: $HYPI_TOKEN; unset = no auth)' },
  { name: 'max-payload', type: 'number', valueName: 'BYTES', description: `largest message accepted (default ${DEFAULT_MAX_PAYLOAD})` },
  { name: 'max-connections', type: 'number', valueName: 'N', description: `concurrent clients (default ${DEFAULT_MAX_CONNECTIONS})` },
  { name: 'allow-spawn', type: 'boolean', description: "let spawn_agent (Pi-DE's launcher) start agents in folders inside $HOME" },
  { name: 'spawn-command', type: 'string', valueName: 'CMD', description: 'the executable spawn_agent starts, run with no arguments (default pi)' },
  { name: 'quiet', type: 'boolean', description: 'no log lines (the listening line is still printed)' },
  { name: 'help', type: 'boolean', description: 'show this help' },
];

export function serveUsage(): string {
  return [
    'ghostwatch serve — an embedded agent-session registry (hypivisor protocol + claims)',
    '',
    'Usage: ghostwatch serve [options]',
    '',
    'Options:',
    formatOptions(SERVE_OPTIONS),
    '',
    'Agents connect to ws://HOST:PORT/ws; Pi-DE opens agents through ws://HOST:PORT/ws/agent/<id>.',
    'The token is never a flag: argv is visible to every user in ps.',
    '',
    'Examples:',
    '  ghostwatch serve                                   # ws://127.0.0.1:31415/ws, no auth',
    '  ghostwatch serve --port 0 --state-file ~/.ghostwatch/registry.json',
    '  HYPI_TOKEN=$(cat ~/.hypi-token) ghostwatch serve --host 0.0.0.0',
    '  ghostwatch serve --token-file ~/.hypi-token --ttl 10 --quiet',
    '  ghostwatch serve --allow-spawn                     # Pi-DE may start pi in folders under $HOME',
  ].join('\n');
}

function whole(name: string, n: number | undefined, min: number, max: number): number | undefined {
  if (n === undefined) return undefined;
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} needs a whole number from ${min} to ${max}, got ${n}`);
  return n;
}

function readToken(path: string | undefined): string | undefined {
  if (path === undefined) return process.env.HYPI_TOKEN || undefined;
  let text: string;
  try {
    text = readBoundedSync(path, 64 * 1024).toString('utf8');
  } catch (err) {
    throw new UsageError(`cannot read --token-file ${sanitize(path)} (${sanitize(fsErrorText(err))})`);
  }
  const token = text.trim();
  if (token === '') throw new UsageError(`--token-file ${sanitize(path)} is empty`);
  return token;
}

/** Server options from argv, or a UsageError. Exported for tests of the option handling. */
export function serveOptionsFrom(argv: readonly string[]): RegistryServerOptions & { help?: boolean } {
  const { options: parsed, positionals } = parseArgs(argv, SERVE_OPTIONS);
  // Typed reads of what the parser checked (serve reads no config file).
  const options = new CommandOptions(parsed);
  if (positionals.length > 0) throw new UsageError(`serve takes no arguments, got "${sanitize(positionals[0])}"`);
  if (options.flag('help')) return { help: true };
  const ttl = options.number('ttl');
  if (ttl !== undefined && !(ttl > 0)) throw new UsageError('--ttl needs a number of seconds above 0');
  const host = options.string('host');
  if (host !== undefined && host.trim() === '') throw new UsageError('--host needs an address');
  const spawnCommand = options.string('spawn-command');
  if (spawnCommand !== undefined && spawnCommand.trim() === '') throw new UsageError('--spawn-command needs a command');
  if (spawnCommand !== undefined && !options.flag('allow-spawn')) throw new UsageError('--spawn-command needs --allow-spawn');
  return {
    port: whole('port', options.number('port'), 0, 65_535) ?? DEFAULT_PORT,
    host: host ?? DEFAULT_HOST,
    ttlSeconds: ttl ?? DEFAULT_TTL_SECONDS,
    stateFile: options.string('state-file'),
    token: readToken(options.string('token-file')),
    maxPayload: whole('max-payload', options.number('max-payload'), 1, 2 ** 31) ?? DEFAULT_MAX_PAYLOAD,
    maxConnections: whole('max-connections', options.number('max-connections'), 1, 1_000_000) ?? DEFAULT_MAX_CONNECTIONS,
    quiet: options.flag('quiet'),
    allowSpawn: options.flag('allow-spawn'),
    spawnCommand: spawnCommand ?? 'pi',
  };
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function watchSignals(): { received: Promise<NodeJS.Signals>; stop: () => void } {
  let on: (signal: NodeJS.Signals) => void = () => {};
  const stop = (): void => {
    for (const s of SIGNALS) process.off(s, on);
  };
  const received = new Promise<NodeJS.Signals>((resolve) => {
    on = (signal) => {
      stop();
      resolve(signal);
    };
  });
  for (const s of SIGNALS) process.on(s, on);
  return { received, stop };
}

function say(line: string): void {
  process.stderr.write(`ghostwatch serve: ${line}\n`);
}

export async function serveCommand(argv: string[]): Promise<number> {
  let opts: ReturnType<typeof serveOptionsFrom>;
  try {
    opts = serveOptionsFrom(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    say(error.message);
    return 2;
  }
  if (opts.help) {
    process.stdout.write(`${serveUsage()}\n`);
    return 0;
  }
  // Installed before listening, so a signal during start-up still ends in a clean close.
  const signals = watchSignals();
  let server;
  try {
    server = await startRegistryServer(opts);
  } catch (error) {
    const code = errorCode(error);
    const where = `${sanitize(opts.host)} port ${opts.port}`;
    if (code === 'EADDRINUSE') say(`cannot listen: ${where} is already in use`);
    else say(`cannot listen on ${where}: ${sanitize(error instanceof Error ? error.message : String(error))}`);
    signals.stop();
    return 2;
  }
  say(`listening on ${server.url}`);
  const signal = await signals.received;
  if (!opts.quiet) say(`${signal}: closing`);
  await server.close();
  return 0;
}
