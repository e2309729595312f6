// `/ws/agent/<nodeId>`: Pi-DE's view of one agent, relayed through the registry as hypivisor does
// (protocols.md §1). serve opens `ws://<machine>:<port>/` itself and passes every text and binary
// frame both ways until one side closes, then closes the other with the same code. Bounded: a
// connect timeout, and backpressure both ways (a side stops being read while the other side's
// unsent bytes are over a limit), so a peer that never reads cannot grow serve's memory.
import { WebSocket, type RawData } from 'ws';
import { sanitize } from '../core/sanitize.js';

/** How long the agent's TCP connect + WebSocket handshake may take (hypivisor: 5 s connect). */
export const DEFAULT_PROXY_CONNECT_TIMEOUT_MS = 5000;
/** Unsent bytes on one side above which the other side is no longer read. */
export const PROXY_BUFFER_LIMIT = 1024 * 1024;

/** Pi-DE is told the agent failed without a close frame: 1014 "bad gateway" (RFC 6455 registry). */
export const CLOSE_BAD_GATEWAY = 1014;
/** The agent is told Pi-DE went away without a close frame. */
export const CLOSE_GOING_AWAY = 1001;

export interface AgentProxyOptions {
  readonly nodeId: string;
  readonly host: string;
  readonly port: number;
  readonly connectTimeoutMs: number;
  readonly bufferLimit: number;
  readonly maxPayload: number;
  readonly log: (line: string) => void;
}

export interface ProxyStats {
  readonly state: 'connecting' | 'relaying' | 'closed';
  /** Bytes serve has not yet written to Pi-DE's socket, and whether Pi-DE is being read. */
  readonly clientBuffered: number;
  readonly clientPaused: boolean;
  readonly agentBuffered: number;
  readonly agentPaused: boolean;
}

export interface AgentProxy {
  readonly client: WebSocket;
  /** Resolves once both sides are closed (or the agent side never opened). */
  readonly closed: Promise<void>;
  stats(): ProxyStats;
  /** Closes both sides with this code (server shutdown). */
  close(code: number, reason: string): void;
  /** Drops both sides at once (a peer that does not answer). */
  terminate(): void;
}

/** A code a close frame may carry (1005, 1006 and 1015 are only ever reported, never sent). */
export function isSendableCloseCode(code: number): boolean {
  return (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);
}

/**
 * The code to pass on when the other side closed with `code`: itself when sendable, 1000 for
 * 1005 (a close frame without a code is a normal close), otherwise `abnormal` (no close frame).
 */
export function relayedCloseCode(code: number, abnormal: number): number {
  if (isSendableCloseCode(code)) return code;
  return code === 1005 ? 1000 : abnormal;
}

function agentUrl(host: string, port: number): string {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return `ws://${bare.includes(':') ? `[${bare}]` : bare}:${port}/`;
}

/** One error frame as hypivisor sends it, then a close. */
export function refuseProxy(client: WebSocket, error: string, code: number): void {
  client.send(JSON.stringify({ error }));
  client.close(code);
}

export function startAgentProxy(client: WebSocket, opts: AgentProxyOptions): AgentProxy {
  const who = `proxy to ${sanitize(opts.nodeId)} (${sanitize(opts.host)}:${opts.port})`;
  let state: ProxyStats['state'] = 'connecting';
  let agent: WebSocket | undefined;
  let timer: NodeJS.Timeout | undefined;
  // Frames Pi-DE sent before the agent answered; Pi-DE is paused at once, so at most one read.
  const early: { data: RawData; isBinary: boolean }[] = [];
  let earlyBytes = 0;

  const clientClosed = new Promise<void>((resolve) => client.once('close', () => resolve()));
  let agentClosed: Promise<void> = Promise.resolve();

  /** Sends `data` on `to`; stops reading `from` while `to` has too much unsent. */
  const forward = (from: WebSocket, to: WebSocket, data: RawData, isBinary: boolean): void => {
    if (to.readyState !== WebSocket.OPEN) return;
    to.send(data as Buffer, { binary: isBinary }, () => {
      if (from.isPaused && from.readyState === WebSocket.OPEN && to.bufferedAmount <= opts.bufferLimit) from.resume();
    });
    if (to.bufferedAmount > opts.bufferLimit && !from.isPaused) from.pause();
  };

  const fail = (error: string): void => {
    if (state === 'closed') return;
    state = 'closed';
    opts.log(`serve: ${who}: ${sanitize(error)}`);
    client.resume(); // paused until the agent answered; its answering close frame must be read
    if (client.readyState === WebSocket.OPEN) refuseProxy(client, error, CLOSE_BAD_GATEWAY);
  };

  client.pause();
  client.on('message', (data, isBinary) => {
    if (state === 'relaying' && agent) return forward(client, agent, data, isBinary);
    if (state !== 'connecting') return;
    early.push({ data, isBinary });
    earlyBytes += Buffer.isBuffer(data) ? data.length : 0;
    if (earlyBytes > opts.bufferLimit) {
      state = 'closed';
      agent?.terminate();
      client.close(1008, 'too much sent before the agent answered');
    }
  });
  client.on('error', (err) => opts.log(`serve: ${who}: Pi-DE side: ${sanitize(err.message)}`));

  try {
    agent = new WebSocket(agentUrl(opts.host, opts.port), { perMessageDeflate: false, maxPayload: opts.maxPayload, followRedirects: false });
  } catch (err) {
    fail(`Cannot reach agent: ${err instanceof Error ? err.message : String(err)}`);
    return { client, closed: clientClosed, stats, close: closeBoth, terminate };
  }
  const upstream = agent;
  agentClosed = new Promise<void>((resolve) => upstream.once('close', () => resolve()));

  timer = setTimeout(() => {
    fail(`Cannot reach agent: no answer within ${opts.connectTimeoutMs} ms`);
    upstream.terminate();
  }, opts.connectTimeoutMs);

  upstream.on('unexpected-response', (_req, res) => {
    fail(`Agent handshake failed: HTTP ${res.statusCode ?? 0}`);
    res.resume();
    upstream.terminate();
  });
  upstream.on('error', (err) => {
    if (state === 'connecting') fail(`Cannot reach agent: ${err.message}`);
    else opts.log(`serve: ${who}: agent side: ${sanitize(err.message)}`);
  });
  upstream.on('open', () => {
    clearTimeout(timer);
    if (state !== 'connecting' || client.readyState !== WebSocket.OPEN) {
      upstream.close(CLOSE_GOING_AWAY);
      return;
    }
    state = 'relaying';
    opts.log(`serve: ${who}: relaying`);
    for (const frame of early.splice(0)) forward(client, upstream, frame.data, frame.isBinary);
    earlyBytes = 0;
    if (upstream.bufferedAmount <= opts.bufferLimit) client.resume();
  });
  upstream.on('message', (data, isBinary) => forward(upstream, client, data, isBinary));
  upstream.on('close', (code, reason) => {
    clearTimeout(timer);
    if (state !== 'relaying') return;
    state = 'closed';
    opts.log(`serve: ${who}: agent closed (${code})`);
    // Read again, or Pi-DE's answering close frame would wait for the 30 s close timeout.
    if (client.isPaused) client.resume();
    if (client.readyState === WebSocket.OPEN) client.close(relayedCloseCode(code, CLOSE_BAD_GATEWAY), reason);
  });
  client.on('close', (code, reason) => {
    clearTimeout(timer);
    if (state === 'connecting') {
      state = 'closed';
      upstream.terminate();
      return;
    }
    if (state !== 'relaying') return;
    state = 'closed';
    if (upstream.isPaused) upstream.resume();
    if (upstream.readyState === WebSocket.OPEN) upstream.close(relayedCloseCode(code, CLOSE_GOING_AWAY), reason);
  });

  function stats(): ProxyStats {
    return {
      state,
      clientBuffered: client.bufferedAmount,
      clientPaused: client.isPaused,
      agentBuffered: agent?.bufferedAmount ?? 0,
      agentPaused: agent?.isPaused ?? false,
    };
  }

  function closeBoth(code: number, reason: string): void {
    clearTimeout(timer);
    state = 'closed';
    if (agent?.isPaused) agent.resume();
    if (client.isPaused) client.resume();
    if (agent && agent.readyState === WebSocket.CONNECTING) agent.terminate();
    else if (agent && agent.readyState === WebSocket.OPEN) agent.close(code, reason);
    if (client.readyState === WebSocket.OPEN) client.close(code, reason);
  }

  function terminate(): void {
    clearTimeout(timer);
    state = 'closed';
    agent?.terminate();
    client.terminate();
  }

  const closed = Promise.all([clientClosed, agentClosed]).then(() => undefined);
  return { client, closed, stats, close: closeBoth, terminate };
}
