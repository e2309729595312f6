// Where the registry is and how to authenticate: --registry, else $HYPIVISOR_WS, else the
// hypivisor default; the token from --token-file, else $HYPI_TOKEN, never from argv (every
// user can read another's command line in ps). A token is never sent in the clear to another host.

import { readFileSync } from 'node:fs';
import { UsageError, type OptionSpec } from './args.js';

export const DEFAULT_REGISTRY = 'ws://localhost:31415/ws';

export const REGISTRY_OPTIONS: readonly OptionSpec[] = [
  { name: 'registry', type: 'string', valueName: 'URL', description: `registry WebSocket URL (default $HYPIVISOR_WS, then ${DEFAULT_REGISTRY})` },
  { name: 'token-file', type: 'string', valueName: 'PATH', description: 'read the registry token from this file (default $HYPI_TOKEN)' },
  { name: 'insecure', type: 'boolean', description: 'allow sending the token over plain ws:// to another host' },
  { name: 'ca-file', type: 'string', valueName: 'PATH', description: 'PEM CA certificate(s) for a wss:// registry with a private CA' },
  { name: 'max-payload', type: 'number', valueName: 'BYTES', description: 'largest registry frame accepted (default 16 MiB)' },
];

export interface RegistryTarget {
  /** Without the token. */
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
}

export function resolveRegistry(flags: RegistryFlags, env: NodeJS.ProcessEnv = process.env): RegistryTarget {
  const fromFlag = flags.registry !== undefined;
  const raw = flags.registry ?? (env.HYPIVISOR_WS || undefined) ?? DEFAULT_REGISTRY;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`${fromFlag ? '--registry' : 'HYPIVISOR_WS'} is not a URL: "${raw}"`);
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
    throw new UsageError(`the registry URL must start with ws:// or wss://, got "${url.protocol}//"`);
  }
  let token = flags.tokenFile !== undefined ? readTokenFile(flags.tokenFile) : env.HYPI_TOKEN || undefined;
  const inUrl = takeToken(url);
  if (inUrl !== undefined) {
    if (fromFlag) throw new UsageError('do not put the token in --registry (argv is public): use HYPI_TOKEN or --token-file');
    token ??= inUrl;
  }
  if (token !== undefined && url.protocol === 'ws:' && !isLoopback(url.hostname) && !flags.insecure) {
    throw new UsageError(
      `refusing to send the token over plain ws:// to ${url.hostname}: use wss:// or an SSH tunnel to localhost (or --insecure)`,
    );
  }
  const ca = flags.caFile !== undefined ? readFile(flags.caFile, '--ca-file') : undefined;
  if (flags.maxPayload !== undefined && (!Number.isInteger(flags.maxPayload) || flags.maxPayload < 1024)) {
    throw new UsageError('--max-payload needs a whole number of bytes, at least 1024');
  }
  return { url: url.toString(), token, ca, maxPayload: flags.maxPayload };
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

export function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

function readTokenFile(path: string): string {
  const token = readFile(path, '--token-file').toString('utf8').trim();
  if (token === '') throw new UsageError(`--token-file ${path} is empty`);
  return token;
}

function readFile(path: string, flag: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    const code = (error as { code?: string }).code ?? (error as Error).message;
    throw new UsageError(`${flag} ${path}: cannot read it (${code})`);
  }
}
