// `ghostwatch serve` on the wire: node:http + ws in noServer mode, so every refusal (404, 401,
// 503) is a plain HTTP answer written before any WebSocket handshake happens.
// Each open connection is a Peer (peer.ts); the rules are in registry.ts, auth.ts and limits.ts.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { homedir, hostname } from 'node:os';
import { isatty } from 'node:tty';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { sanitize } from '../core/sanitize.js';
import { isLoopbackHost } from '../os/loopback.js';
import { DEFAULT_PROXY_CONNECT_TIMEOUT_MS, PROXY_BUFFER_LIMIT, refuseProxy, startAgentProxy, type ProxyStats } from './agent-proxy.js';
import { percentDecodeLenient, tokenFromUrl, tokenMatches } from './auth.js';
import { AgentSpawner, DEFAULT_REGISTER_TIMEOUT_MS } from './agent-spawner.js';
import type { HostMethodOptions } from './host-methods.js';
import { startStamper } from './process-start.js';
import { ProxyPeer, RegistryPeer, type Peer, type PeerStats } from './peer.js';
import type { RegistryEvent } from './protocol.js';
import { Registry, DEFAULT_TTL_SECONDS } from './registry.js';
import { loadStateFile, StateFileWriter } from './state-file.js';
import { MAX_REQUEST_BYTES, type RegistryLimits } from './limits.js';

export const DEFAULT_PORT = 31415;
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_MAX_PAYLOAD = 16 * 1024 * 1024;
export const DEFAULT_MAX_CONNECTIONS = 1000;

export interface RegistryServerOptions {
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  /** Pre-shared token; undefined or '' means no auth. */
  readonly token?: string | undefined;
  readonly ttlSeconds?: number;
  readonly sweepIntervalMs?: number;
  /** Our own pings find half-open peers: no pong by the next ping and the peer is terminated. */
  readonly pingIntervalMs?: number;
  readonly maxPayload?: number;
  readonly maxConnections?: number;
  readonly stateFile?: string | undefined;
  /** Where log lines go (default stderr); ignored when `quiet`. */
  readonly log?: (line: string) => void;
  readonly quiet?: boolean;
  /** Unix ms. */
  readonly now?: () => number;
  /** Fault injection for tests only: return false to drop that broadcast event. */
  readonly eventFilter?: (frame: object) => boolean;
  /** The directory list_directories and spawn_agent are confined to (default $HOME). */
  readonly homeDir?: string;
  /** spawn_agent starts agents only when this is true (`--allow-spawn`). */
  readonly allowSpawn?: boolean;
  /** The executable spawn_agent starts, no shell and no arguments (default `pi`). */
  readonly spawnCommand?: string;
  /** The environment spawned agents start from; its $TMUX puts them in tmux windows (default process.env). */
  readonly spawnBaseEnv?: NodeJS.ProcessEnv;
  /** How long a spawn_agent reply waits for the agent to register (default 15 s). */
  readonly spawnRegisterTimeoutMs?: number;
  /** This host's name: registrations on it get pid_started_at stamped (default os.hostname()). */
  readonly hostName?: string;
  /** How long `/ws/agent/<id>` waits for the agent's WebSocket to open. */
  readonly proxyConnectTimeoutMs?: number;
  /** Unsent bytes on one side of a proxy above which the other side is not read. */
  readonly proxyBufferLimit?: number;
  /** What clients may store: field sizes, nodes and claims per connection and in all. */
  readonly limits?: Partial<RegistryLimits>;
  /** Unsent bytes to a `/ws` client above which its requests are no longer read (default 1 MiB). */
  readonly readPauseBytes?: number;
}

export interface RegistryServer {
  readonly url: string;
  readonly port: number;
  readonly host: string;
  readonly registry: Registry;
  /** One entry per open `/ws/agent/<id>` connection: its state, buffers and paused sides. */
  proxyStats(): ProxyStats[];
  /** One entry per open `/ws` connection: what is unsent to it and whether it is being read. */
  peerStats(): PeerStats[];
  close(): Promise<void>;
}

const SHUTDOWN_GRACE_MS = 1000;
/**
 * Unsent bytes to a peer above which its requests are not read until it reads: a client that
 * sends and never reads fills its own TCP window, not serve's memory. A full `init` is more and
 * is let through: reading stops until it has gone out.
 */
export const READ_PAUSE_BYTES = 1024 * 1024;

function writeRefusal(socket: Duplex, status: number, reason: string, body: string): void {
  socket.on('error', () => {}); // the peer may already be gone; nothing to tell it then
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

function pathOf(url: string | undefined): string {
  return (url ?? '/').split('?')[0] ?? '/';
}

const AGENT_PREFIX = '/ws/agent/';

function isWsPath(path: string): boolean {
  return path === '/ws' || (path.startsWith(AGENT_PREFIX) && path.length > AGENT_PREFIX.length);
}

/** The URL serve's own clients reach it at: a wildcard bind is reached on loopback. */
function reachableUrl(host: string, port: number): string {
  const h = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `ws://${h.includes(':') ? `[${h}]` : h}:${port}/ws`;
}

/** ws closes an over-size message with a bare 1009; give that close a reason a person can read. */
function explainOversizeClose(ws: WebSocket, maxPayload: number): void {
  const close = ws.close.bind(ws);
  ws.close = (code?: number, data?: string | Buffer): void =>
    close(code, code === 1009 && data === undefined ? `message too big: over ${maxPayload} bytes` : data);
}

export async function startRegistryServer(opts: RegistryServerOptions = {}): Promise<RegistryServer> {
  const host = opts.host ?? DEFAULT_HOST;
  const token = opts.token === '' ? undefined : opts.token;
  const maxPayload = opts.maxPayload ?? DEFAULT_MAX_PAYLOAD;
  const maxConnections = opts.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const log = opts.quiet ? () => {} : (opts.log ?? ((line: string) => void process.stderr.write(`${line}\n`)));
  const peers = new Set<RegistryPeer>();
  /** Open `/ws/agent/<id>` connections; each counts as one against maxConnections. */
  const proxies = new Set<ProxyPeer>();
  const pending: RegistryEvent[] = [];
  const readPauseBytes = opts.readPauseBytes ?? READ_PAUSE_BYTES;

  // A request's events follow its response; changes from timers and closes go out on a microtask.
  const broadcast = (): void => {
    for (const event of pending.splice(0)) {
      if (opts.eventFilter && !opts.eventFilter(event)) continue;
      // One buffer that every peer's send refers to: a thousand slow peers do not copy it a thousand times.
      const data = Buffer.from(JSON.stringify(event));
      // A peer that never reads would grow our memory without bound; a stale stream is worse: send drops it.
      for (const peer of peers) peer.send(data);
    }
  };
  /** `init` as sent, shared by every connection until the registry changes (up to 16 MiB each). */
  let initCache: Buffer | undefined;
  let writer: StateFileWriter | undefined;
  /** Set once listening (its agents are told this server's URL); told of every registration. */
  let spawner: AgentSpawner | undefined;
  const registry = new Registry({
    now: opts.now ?? Date.now,
    ttlSeconds: opts.ttlSeconds ?? DEFAULT_TTL_SECONDS,
    log,
    emit: (event) => {
      initCache = undefined;
      if (pending.push(event) === 1) queueMicrotask(broadcast);
      // After the push: a spawn_agent reply this registration releases follows its node_joined.
      if (event.event === 'node_joined') spawner?.joined(event.node);
    },
    onChange: () => writer?.schedule(),
    startTimeOf: startStamper(opts.hostName ?? hostname()),
    ...(opts.limits ? { limits: opts.limits } : {}),
  });

  if (opts.stateFile !== undefined) {
    const loaded = await loadStateFile(opts.stateFile, { log, now: opts.now ?? Date.now });
    registry.restore(loaded.nodes, loaded.claims);
    if (loaded.nodes.length > 0) log(`serve: restored ${loaded.nodes.length} nodes (offline until they register again), ${loaded.claims.length} claims`);
    writer = new StateFileWriter(opts.stateFile, () => registry.snapshot(), { log });
  }

  // Requests on /ws are small (every stored field is bounded); the agent proxy relays up to maxPayload.
  const requestMaxPayload = Math.min(maxPayload, MAX_REQUEST_BYTES);
  const wss = new WebSocketServer({ noServer: true, maxPayload: requestMaxPayload, clientTracking: false, skipUTF8Validation: true });
  const proxyWss = new WebSocketServer({ noServer: true, maxPayload, clientTracking: false, skipUTF8Validation: true });
  const http = createServer((req: IncomingMessage, res: ServerResponse) => {
    const isWs = isWsPath(pathOf(req.url));
    res.writeHead(isWs ? 426 : 404, { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' });
    res.end(isWs ? 'Upgrade Required: this is a WebSocket endpoint\n' : 'Not Found\n');
  });

  // Set once listening: spawned agents are told this server's URL.
  let hostMethods: HostMethodOptions;

  const accept = (ws: WebSocket): void => {
    explainOversizeClose(ws, requestMaxPayload);
    const peer = new RegistryPeer(ws, {
      registry,
      log,
      readPauseBytes,
      hostMethods: () => hostMethods,
      broadcast,
      onPing: () => (initCache = undefined), // last_seen changed
      onClose: (p) => peers.delete(p),
    });
    peers.add(peer);
    initCache ??= Buffer.from(JSON.stringify(registry.initFrame()));
    peer.sendInit(initCache);
  };

  // `/ws/agent/<id>`: the id as sent, or else percent-decoded (Pi-DE sends encodeURIComponent(id)).
  const acceptProxy = (rawId: string) => (client: WebSocket): void => {
    const decoded = percentDecodeLenient(rawId);
    const node = registry.nodeById(rawId) ?? (decoded === undefined ? undefined : registry.nodeById(decoded));
    if (!node) return refuseProxy(client, 'Agent not found', 1000);
    if (node.status !== 'active') return refuseProxy(client, 'Agent is offline', 1000);
    const proxy = startAgentProxy(client, {
      nodeId: node.id,
      host: node.machine,
      port: node.port,
      connectTimeoutMs: opts.proxyConnectTimeoutMs ?? DEFAULT_PROXY_CONNECT_TIMEOUT_MS,
      bufferLimit: opts.proxyBufferLimit ?? PROXY_BUFFER_LIMIT,
      maxPayload,
      log,
    });
    const peer = new ProxyPeer(proxy, log);
    proxies.add(peer);
    void proxy.closed.then(() => proxies.delete(peer));
  };

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // As hypivisor: the token is checked first, on every path; then the route.
    if (token !== undefined && !tokenMatches(tokenFromUrl(req.url ?? ''), token)) {
      return writeRefusal(socket, 401, 'Unauthorized', 'Unauthorized\n');
    }
    const path = pathOf(req.url);
    if (path === AGENT_PREFIX) return writeRefusal(socket, 400, 'Bad Request', 'Missing node ID\n');
    if (!isWsPath(path)) return writeRefusal(socket, 404, 'Not Found', 'Not Found\n');
    if (peers.size + proxies.size >= maxConnections) {
      log(`serve: refused a connection: too many connections (${maxConnections})`);
      return writeRefusal(socket, 503, 'Service Unavailable', `too many connections (limit ${maxConnections})\n`);
    }
    // handleUpgrade answers synchronously (no verifyClient, no deflate): the count is exact.
    if (path === '/ws') wss.handleUpgrade(req, socket, head, accept);
    else proxyWss.handleUpgrade(req, socket, head, acceptProxy(path.slice(AGENT_PREFIX.length)));
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen({ host, port: opts.port ?? DEFAULT_PORT }, () => {
      http.off('error', reject);
      resolve();
    });
  });
  http.on('error', (err) => log(`serve: server error: ${sanitize(err.message)}`));
  // Only now: a start that fails (port taken) must not overwrite the file of the instance running there.
  // Persists what start-up changed (entries dropped, nodes now offline); a bad file stays until a change.
  if (registry.listNodes().length > 0) writer?.schedule();
  const address = http.address();
  const port = typeof address === 'object' && address !== null ? address.port : (opts.port ?? DEFAULT_PORT);
  if (token === undefined && !isLoopbackHost(host)) {
    log(`serve: warning: listening on ${sanitize(host)} without a token: anyone who can reach it can register and deregister (set HYPI_TOKEN or --token-file)`);
  }

  const spawnEnv: Record<string, string> = { HYPIVISOR_WS: reachableUrl(host, port) };
  if (token !== undefined) spawnEnv.HYPI_TOKEN = token;
  spawner = new AgentSpawner({
    command: opts.spawnCommand ?? 'pi',
    baseEnv: opts.spawnBaseEnv ?? process.env,
    registryEnv: spawnEnv,
    registerTimeoutMs: opts.spawnRegisterTimeoutMs ?? DEFAULT_REGISTER_TIMEOUT_MS,
    hostName: opts.hostName ?? hostname(),
    hasTerminal: isatty(0),
    log,
  });
  hostMethods = { homeDir: opts.homeDir ?? homedir(), allowSpawn: opts.allowSpawn === true, spawner };

  const sweeper = setInterval(() => registry.sweep(), opts.sweepIntervalMs ?? 15_000);
  const pingIntervalMs = opts.pingIntervalMs ?? 30_000;
  const pinger = setInterval(() => {
    for (const peer of [...peers, ...proxies]) peer.tick(pingIntervalMs);
  }, pingIntervalMs);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      clearInterval(sweeper);
      clearInterval(pinger);
      spawner?.close();
      http.close();
      const all: Peer[] = [...peers, ...proxies];
      await Promise.all(all.map((peer) => peer.shutdown(SHUTDOWN_GRACE_MS)));
      broadcast();
      writer?.flush();
      http.closeAllConnections();
      wss.close();
      proxyWss.close();
    })();
    return closing;
  };

  const urlHost = host.includes(':') ? `[${host}]` : host;
  const proxyStats = (): ProxyStats[] => [...proxies].map(({ proxy }) => proxy.stats());
  const peerStats = (): PeerStats[] => [...peers].map((p) => p.stats());
  return { url: `ws://${urlHost}:${port}/ws`, port, host, registry, proxyStats, peerStats, close };
}
