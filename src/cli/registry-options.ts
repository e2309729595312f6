// Where the registry is and how to authenticate: --registry, else $HYPIVISOR_WS, else the
// hypivisor default; the token from --token-file, else $HYPI_TOKEN, never from argv (every
// user can read another's command line in ps). A token (or a URL's password) is never sent in
// the clear to another host, and a password is never shown.

import { childProcess } from '../os/builtins.js';
import { isLoopbackAddress, isLoopbackHost } from '../os/loopback.js';
import { fsErrorText, readBoundedSync } from '../os/safe-file.js';
import { isIP } from 'node:net';
import { redactUrl } from '../core/sanitize.js';
import { UsageError, type OptionSpec } from './args.js';

export const DEFAULT_REGISTRY = 'ws://localhost:31415/ws';

export const REGISTRY_OPTIONS: readonly OptionSpec[] = [
  { name: 'registry', type: 'string', valueName: 'URL', description: `the hypivisor registry's WebSocket URL, read alone and required (else looked for at $HYPIVISOR_WS, then ${DEFAULT_REGISTRY})` },
  { name: 'token-file', type: 'string', valueName: 'PATH', description: 'read the registry token from this file (default $HYPI_TOKEN)' },
  { name: 'insecure', type: 'boolean', description: 'allow sending the token over plain ws:// to another host' },
  { name: 'ca-file', type: 'string', valueName: 'PATH', description: 'PEM CA certificate(s) for a wss:// registry with a private CA' },
  { name: 'max-payload', type: 'number', valueName: 'BYTES', description: 'largest registry frame accepted (default 16 MiB)' },
];

export interface RegistryTarget {
  /** Without the token; a `user:password@` stays (the connection needs it): show `redactUrl(url)`. */
  readonly url: string;
  readonly token?: string | undefined;
  readonly ca?: Buffer | undefined;
  readonly maxPayload?: number | undefined;
}

export interface RegistryFlags {
  readonly registry?: string | undefined;
  readonly tokenFile?: string | undefined;
  readonly insecure?: boolean | undefined;
  readonly caFile?: string | undefined;
  readonly maxPayload?: number | undefined;
  /** How an error names a setting: `--token-file`, or `"token-file" in ~/.config/ghostwatch/config.json` when the file set it. */
  readonly label?: ((name: string) => string) | undefined;
}

/** The addresses a host name resolves to (every one, as dns.lookup with all: true), or why not. */
export type LookupAll = (hostname: string) => { readonly addresses: readonly string[] } | { readonly error: string };

export function resolveRegistry(flags: RegistryFlags, env: NodeJS.ProcessEnv = process.env, lookup: LookupAll = lookupAllSync): RegistryTarget {
  const label = flags.label ?? ((name: string) => `--${name}`);
  const fromFlag = flags.registry !== undefined;
  const what = fromFlag ? label('registry') : 'HYPIVISOR_WS';
  const raw = flags.registry ?? (env.HYPIVISOR_WS || undefined) ?? DEFAULT_REGISTRY;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${what} is not a URL: "${redactUrl(raw)}"`);
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
    throw new UsageError(`the registry URL must start with ws:// or wss://, got "${url.protocol}//"`);
  }
  // A WebSocket URL has no fragment: ws throws on one, from deep inside every command.
  if (url.href.includes('#')) {
    throw new UsageError(`${what} has a #fragment, which a WebSocket URL cannot have: remove "${url.hash || '#'}" from "${redactUrl(raw)}"`);
  }
  let token = flags.tokenFile !== undefined ? readTokenFile(flags.tokenFile, label('token-file')) : env.HYPI_TOKEN || undefined;
  const inUrl = takeToken(url);
  if (inUrl !== undefined) {
    if (fromFlag) throw new UsageError(`do not put the token in ${what} (argv and config files are read by others): use HYPI_TOKEN or ${label('token-file')}`);
    token ??= inUrl;
  }
  const secret = token !== undefined ? 'the token' : url.password !== '' ? 'the password of the URL' : undefined;
  if (secret !== undefined && url.protocol === 'ws:' && !flags.insecure) {
    const why = notLoopback(url.hostname, lookup);
    if (why !== undefined) throw new UsageError(`refusing to send ${secret} over plain ws:// to ${why}: ${secureAdvice(url)}`);
  }
  const ca = flags.caFile !== undefined ? readFile(flags.caFile, label('ca-file')) : undefined;
  if (flags.maxPayload !== undefined && (!Number.isInteger(flags.maxPayload) || flags.maxPayload < 1024)) {
    throw new UsageError(`${label('max-payload')} needs a whole number of bytes, at least 1024`);
  }
  return { url: url.toString(), token, ca, maxPayload: flags.maxPayload };
}

/** How to reach the same registry without the secret in clear: its wss:// spelling, or a tunnel. */
function secureAdvice(url: URL): string {
  const wss = new URL(url.href);
  wss.protocol = 'wss:';
  wss.password = '';
  wss.username = '';
  const port = url.port || '80';
  return (
    `use ${wss.href} (TLS; --ca-file PATH for a private CA), ` +
    `or an SSH tunnel (ssh -N -L ${port}:localhost:${port} ${url.hostname}, then --registry ws://127.0.0.1:${port}${url.pathname}); ` +
    '--insecure sends it anyway'
  );
}
/** Remove token=... from the URL's query and return it, percent-decoded as hypivisor does ('+' stays '+'). */
function takeToken(url: URL): string | undefined {
  let token: string | undefined;
  const rest = url.search
    .slice(1)
    .split('&')
    .filter((pair) => {
      if (!pair.startsWith('token=')) return pair !== '';
      try {
        token ??= decodeURIComponent(pair.slice('token='.length));
      } catch {
        token ??= pair.slice('token='.length);
      }
      return false;
    });
  url.search = rest.length > 0 ? `?${rest.join('&')}` : '';
  return token;
}

/**
 * Undefined when the host is loopback, else what it is (for the refusal). Literal loopback is
 * 127.0.0.0/8, ::1 (also as ::ffff:127.x.x.x) and the name `localhost`. Any other name, a
 * `*.localhost` one included, counts only when it resolves, and only to loopback addresses:
 * RFC 6761 asks resolvers to answer loopback for them, but /etc/hosts or DNS may say otherwise.
 */
function notLoopback(hostname: string, lookup: LookupAll): string | undefined {
  if (isLoopbackHost(hostname)) return undefined;
  const name = hostname.toLowerCase();
  if (!name.endsWith('.localhost') && !name.endsWith('.localhost.') && name !== 'localhost.') return hostname;
  const answer = lookup(name);
  if ('error' in answer) return `${hostname} (it does not resolve: ${answer.error})`;
  const remote = answer.addresses.filter((a) => !isLoopbackAddress(a));
  if (answer.addresses.length === 0) return `${hostname} (it resolves to no address)`;
  if (remote.length > 0) return `${hostname} (it resolves to ${remote.join(', ')}, not only to loopback)`;
  return undefined;
}

/**
 * dns.lookup(name, {all: true}), the resolver the WebSocket connection itself uses, made
 * synchronous by running it in a short-lived node process (only for `*.localhost` names with a
 * secret to send over ws://). The child gets the resolver's variables and nothing else: no token.
 */
export function lookupAllSync(hostname: string): { addresses: string[] } | { error: string } {
  const script =
    "require('node:dns').lookup(process.env.GHOSTWATCH_LOOKUP, { all: true }, (e, a) => " +
    'process.stdout.write(JSON.stringify(e ? { error: e.code || e.message } : { addresses: a.map((x) => x.address) })))';
  const env: NodeJS.ProcessEnv = { GHOSTWATCH_LOOKUP: hostname };
  for (const k of ['PATH', 'LOCALDOMAIN', 'RES_OPTIONS', 'HOSTALIASES']) if (process.env[k] !== undefined) env[k] = process.env[k];
  try {
    const out = childProcess().execFileSync(process.execPath, ['-e', script], { env, encoding: 'utf8', timeout: 5_000, stdio: ['ignore', 'pipe', 'ignore'] });
    const parsed: unknown = JSON.parse(out);
    if (typeof parsed !== 'object' || parsed === null) return { error: 'no answer' };
    if ('addresses' in parsed && Array.isArray(parsed.addresses)) return { addresses: parsed.addresses.map(String) };
    return { error: 'error' in parsed ? String(parsed.error) : 'no answer' };
  } catch (error) {
    return { error: typeof error === 'object' && error !== null && 'code' in error && error.code === 'ETIMEDOUT' ? 'the lookup took longer than 5 s' : 'the lookup failed' };
  }
}

function readTokenFile(path: string, what: string): string {
  const token = readFile(path, what).toString('utf8').trim();
  if (token === '') throw new UsageError(`${what} ${path} is empty`);
  return token;
}

function readFile(path: string, flag: string): Buffer {
  try {
    return readBoundedSync(path, 4 * 1024 * 1024);
  } catch (error) {
    throw new UsageError(`${flag} ${path}: cannot read it (${fsErrorText(error)})`);
  }
}
