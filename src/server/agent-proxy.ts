// `/ws/agent/<nodeId>`: Pi-DE's view of one agent, relayed through the registry as hypivisor does
// (protocols.md §1). serve opens `ws://<machine>:<port>/` itself and passes the frames both ways
// until one side closes. Frames are relayed as bytes, never held whole: pi's own frames carry
// images (a real pi 0.73.1 sent 4 MB tool results and an 11 MB init_state, test/real-pi), so a
// proxy that assembled each frame held megabytes per connection. Bounded: a side is no longer read
// while more than the mark is unsent to the other (one read more at most), and a proxy with more
// than the hard limit unsent to one side is closed; a frame over the frame limit closes both.
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { sanitize } from '../core/sanitize.js';
import { openAgentSocket } from './ws-handshake.js';
import { closeFrameToClient, closeFrameToServer, FrameCursor, pingFrameToClient, textFrameToClient, type FrameNotice } from './ws-frames.js';

/** How long the agent's TCP connect + WebSocket handshake may take (hypivisor: 5 s connect). */
export const DEFAULT_PROXY_CONNECT_TIMEOUT_MS = 5000;
/** Unsent bytes to one side above which the other side is no longer read. */
export const PROXY_BUFFER_LIMIT = 64 * 1024;
/** Unsent bytes to one side above which the proxy is closed (pausing the other side keeps it far below). */
export const PROXY_HARD_LIMIT = 1024 * 1024;
/** How long a side that was told to close may take to read what was still unsent to it. */
const CLOSE_GRACE_MS = 5000;

/** Pi-DE is told the agent failed without a close frame: 1014 "bad gateway" (RFC 6455 registry). */
export const CLOSE_BAD_GATEWAY = 1014;
/** The agent is told Pi-DE went away without a close frame. */
export const CLOSE_GOING_AWAY = 1001;
/** A frame over the frame limit. */
const CLOSE_TOO_BIG = 1009;

export interface AgentProxyOptions {
  readonly nodeId: string;
  readonly host: string;
  readonly port: number;
  readonly connectTimeoutMs: number;
  /** The mark: unsent bytes to one side above which the other is not read. */
  readonly bufferLimit: number;
  readonly hardLimit: number;
  /** The largest frame relayed. */
  readonly maxPayload: number;
  readonly log: (line: string) => void;
  /** Pi-DE sent something (a pong, a frame): it is there. */
  readonly onPiDe?: () => void;
  /** Bytes handed to a socket (+) and written out of serve's memory (-), for the budget of all buffers. */
  readonly account?: (delta: number) => void;
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
  /** Resolves once both sides are closed (or the agent side never opened). */
  readonly closed: Promise<void>;
  stats(): ProxyStats;
  /** A ping to Pi-DE, written between two of the agent's frames; false when it could not be now. */
  ping(): boolean;
  /** Closes both sides with this code (server shutdown). */
  close(code: number, reason: string): void;
  /** Drops both sides at once (a peer that does not answer). */
  terminate(): void;
}

/** One error frame as hypivisor sends it, then a close; what Pi-DE still sends is read and dropped. */
export function refuseProxy(client: Duplex, error: string, code: number): void {
  client.on('error', () => {});
  client.resume();
  client.write(textFrameToClient(JSON.stringify({ error })));
  client.end(closeFrameToClient(code));
  setTimeout(() => client.destroy(), CLOSE_GRACE_MS).unref();
}

/** One direction of the relay: a source socket, the socket it is written to, and where its frames are. */
interface Lane {
  readonly from: Socket;
  readonly to: Socket;
  readonly cursor: FrameCursor;
  /** The name of the side that reads this lane, for log lines. */
  readonly reader: string;
  /** A close frame has gone this way (passed on, or ours): nothing more may follow it. */
  closeSent: boolean;
}

export function startAgentProxy(client: Socket, head: Buffer, opts: AgentProxyOptions): AgentProxy {
  const who = `proxy to ${sanitize(opts.nodeId)} (${sanitize(opts.host)}:${opts.port})`;
  let state: ProxyStats['state'] = 'connecting';
  let agent: Socket | undefined;
  let toAgent: Lane | undefined;
  let toClient: Lane | undefined;
  let graceTimer: NodeJS.Timeout | undefined;
  const account = opts.account ?? (() => {});

  client.pause(); // read once the agent answers; until then what Pi-DE sends waits in the kernel
  client.on('error', (err) => opts.log(`serve: ${who}: Pi-DE side: ${sanitize(err.message)}`));
  const clientClosed = new Promise<void>((resolve) => client.once('close', () => resolve()));
  let agentClosed: Promise<void> = Promise.resolve();

  const opening = openAgentSocket(opts.host, opts.port, opts.connectTimeoutMs);
  client.once('close', () => {
    if (state === 'connecting') {
      state = 'closed';
      opening.abort();
    }
  });

  /** Writes on a socket, counted until it is out of serve's memory. */
  const write = (to: Socket, data: Buffer): void => {
    account(data.length);
    to.write(data, () => {
      account(-data.length);
      resumeWaiting();
    });
  };

  /** A side not read because the other had too much unsent is read again once that is below the mark. */
  const resumeWaiting = (): void => {
    if (state !== 'relaying') return;
    for (const lane of [toAgent, toClient]) {
      if (lane && lane.from.isPaused() && lane.to.writableLength <= opts.bufferLimit) lane.from.resume();
    }
  };

  /** Our own frame on a lane, only between two frames of the relayed stream; false when it cannot go now. */
  const inject = (lane: Lane, frame: Buffer): boolean => {
    if (lane.closeSent || !lane.cursor.atBoundary || lane.to.destroyed || !lane.to.writable) return false;
    write(lane.to, frame);
    return true;
  };

  const relay = (lane: Lane, chunk: Buffer): void => {
    if (state !== 'relaying' || lane.closeSent) return;
    const { notices, cut } = lane.cursor.feed(chunk);
    const part = cut === undefined ? chunk : chunk.subarray(0, cut);
    if (part.length > 0) write(lane.to, part);
    for (const notice of notices) noticed(lane, notice);
    if (cut !== undefined) return tooBig();
    if (lane.to.writableLength > opts.hardLimit) {
      opts.log(`serve: ${who}: ${lane.to.writableLength} bytes unsent to ${lane.reader}, over the hard limit of ${opts.hardLimit}: closed`);
      return terminate();
    }
    if (lane.to.writableLength > opts.bufferLimit) lane.from.pause();
  };

  const noticed = (lane: Lane, notice: FrameNotice): void => {
    if (notice.kind === 'close') {
      lane.closeSent = true;
      if (lane === toClient) opts.log(`serve: ${who}: agent closed (${notice.code})`);
    }
  };

  /** A frame over the limit: both sides are told 1009 where they can be, as ws does. */
  const tooBig = (): void => {
    opts.log(`serve: ${who}: a frame over ${opts.maxPayload} bytes: closed`);
    closeBoth(CLOSE_TOO_BIG, `message too big: over ${opts.maxPayload} bytes`);
  };

  /** Ends a lane's reader: our close frame first when none went its way (else it is destroyed mid-frame). */
  const endLane = (lane: Lane, code: number, reason: string): void => {
    if (!lane.closeSent) {
      const frame = lane.to === agent ? closeFrameToServer(code, reason) : closeFrameToClient(code, reason);
      if (!inject(lane, frame)) {
        lane.to.destroy();
        return;
      }
      lane.closeSent = true;
    }
    if (lane.to.isPaused()) lane.to.resume(); // its own close frame must still be read
    lane.to.end();
  };

  /** One side's connection ended: the other is told (1014 toward Pi-DE, 1001 toward the agent) and ended. */
  const sideEnded = (side: Socket): void => {
    if (state !== 'relaying' || !toAgent || !toClient) return;
    state = 'closed';
    if (side === agent) endLane(toClient, CLOSE_BAD_GATEWAY, '');
    else endLane(toAgent, CLOSE_GOING_AWAY, '');
    side.end();
    graceTimer = setTimeout(terminate, CLOSE_GRACE_MS);
  };

  const fail = (error: string): void => {
    if (state !== 'connecting') return;
    state = 'closed';
    opts.log(`serve: ${who}: ${sanitize(error)}`);
    if (!client.destroyed) refuseProxy(client, error, CLOSE_BAD_GATEWAY);
  };

  void opening.done.then((answer) => {
    if ('error' in answer) return fail(answer.error);
    const upstream = answer.socket;
    if (state !== 'connecting' || client.destroyed) {
      upstream.destroy();
      return;
    }
    agent = upstream;
    agentClosed = new Promise<void>((resolve) => upstream.once('close', () => resolve()));
    state = 'relaying';
    opts.log(`serve: ${who}: relaying`);
    upstream.setNoDelay(true);
    client.setNoDelay(true);
    const lanes = {
      toAgent: { from: client, to: upstream, cursor: new FrameCursor(opts.maxPayload), reader: 'the agent', closeSent: false },
      toClient: { from: upstream, to: client, cursor: new FrameCursor(opts.maxPayload), reader: 'Pi-DE', closeSent: false },
    };
    toAgent = lanes.toAgent;
    toClient = lanes.toClient;
    upstream.on('error', (err) => opts.log(`serve: ${who}: agent side: ${sanitize(err.message)}`));
    upstream.on('data', (chunk: Buffer) => relay(lanes.toClient, chunk));
    client.on('data', (chunk: Buffer) => {
      opts.onPiDe?.();
      relay(lanes.toAgent, chunk);
    });
    for (const side of [client, upstream]) {
      side.on('end', () => sideEnded(side));
      side.on('close', () => {
        sideEnded(side);
        if (client.destroyed && upstream.destroyed) clearTimeout(graceTimer);
      });
    }
    // What came with the handshakes: Pi-DE's first frames, the agent's (pi-socket sends init_state at once).
    if (head.length > 0) relay(lanes.toAgent, head);
    if (answer.head.length > 0) relay(lanes.toClient, answer.head);
    if (state === 'relaying' && upstream.writableLength <= opts.bufferLimit) client.resume();
  });

  function stats(): ProxyStats {
    return {
      state,
      clientBuffered: client.writableLength,
      clientPaused: client.isPaused(),
      agentBuffered: agent?.writableLength ?? 0,
      agentPaused: agent?.isPaused() ?? false,
    };
  }

  function ping(): boolean {
    return state === 'relaying' && toClient !== undefined && inject(toClient, pingFrameToClient());
  }

  function closeBoth(code: number, reason: string): void {
    if (state === 'connecting') {
      state = 'closed';
      opening.abort();
      if (!client.destroyed) client.end(closeFrameToClient(code, reason));
      return;
    }
    if (state === 'closed' || !toAgent || !toClient) return;
    state = 'closed';
    endLane(toClient, code, reason);
    endLane(toAgent, code, reason);
    clearTimeout(graceTimer);
    graceTimer = setTimeout(terminate, CLOSE_GRACE_MS);
  }

  function terminate(): void {
    clearTimeout(graceTimer);
    if (state === 'connecting') opening.abort();
    state = 'closed';
    agent?.destroy();
    client.destroy();
  }

  const closed = Promise.all([clientClosed, opening.done.then(() => agentClosed)]).then(() => undefined);
  return { closed, stats, ping, close: closeBoth, terminate };
}
