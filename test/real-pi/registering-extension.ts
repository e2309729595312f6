// A small pi extension that registers the running pi with a hypivisor-protocol registry the way
// the real pi-socket extension does (protocols.md §1, "What real pi agents do"): its own WebSocket
// server on PI_SOCKET_PORT (default 8080, next free one upward, kept across /new), a connection to
// HYPIVISOR_WS (?token= encodeURIComponent(HYPI_TOKEN) when set), `register` with the session id,
// os.hostname(), cwd, port, status "active" and process.pid (never pid_started_at), a WebSocket
// ping frame every 30 s, reconnect after 5 s (PI_SOCKET_RECONNECT_MS) doubling up to 5 min with a
// re-register, `deregister` flushed before close on a clean exit, and on /new a deregister of the
// old id and a register of the new one on the same connection.
// Its own server serves Pi-DE as pi-socket does (reached through the registry's /ws/agent/<id>
// proxy): `init_state` on connect (the branch's messages, the oldest dropped past 500 KB but never
// fewer than the last 10), pi's message and tool events forwarded as they are, a text frame as a
// prompt, and `attach_file` (base64, as Pi-DE sends it) as a user message holding the file.
//
// pi loads extensions through jiti without a module cache and builds a fresh instance on /new, so
// what belongs to the process (server, connection, timers) lives on globalThis. Our one difference
// from pi-socket: the agent's own server listens on 127.0.0.1 only (tests use loopback only).
//
// GHOSTWATCH_REAL_PI_TRACE=FILE appends one JSON line per step (with `at`, Unix ms), written
// synchronously so that it survives process.exit: the tests read what pi did from it.
import { appendFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { WebSocket, WebSocketServer } from 'ws';

/** The part of pi's ExtensionAPI this extension uses (pi's own types are not installed here). */
interface SessionContext {
  readonly cwd: string;
  readonly sessionManager: { getSessionId(): string; getBranch(): unknown[] };
  isIdle(): boolean;
}
/** pi's events that pi-socket forwards to Pi-DE as they are. */
const RELAYED = ['message_start', 'message_update', 'message_end', 'tool_execution_start', 'tool_execution_update', 'tool_execution_end'] as const;
interface PiExtensionApi {
  on(event: 'session_start' | 'session_shutdown', handler: (event: { reason?: string }, ctx: SessionContext) => unknown): void;
  on(event: (typeof RELAYED)[number], handler: (event: { type: string }) => unknown): void;
  sendUserMessage(content: string | readonly object[], options?: { deliverAs: 'followUp' }): void;
  getAllTools(): unknown[];
}

interface AgentState {
  server?: WebSocketServer;
  /** The current session's pi and context (a new instance after /new). */
  api?: PiExtensionApi;
  ctx?: SessionContext;
  port?: number;
  link?: WebSocket;
  nodeId?: string;
  cwd: string;
  pingTimer?: NodeJS.Timeout;
  reconnectTimer?: NodeJS.Timeout;
  reconnectDelayMs: number;
  stopping: boolean;
}

const PING_MS = 30_000;
/** pi-socket's budget for init_state, and the messages it keeps whatever their size. */
const INIT_STATE_BYTES = 500 * 1024;
const INIT_STATE_KEEP = 10;
const RECONNECT_CAP_MS = 5 * 60_000;
const FLUSH_WAIT_MS = 1_000;
const STATE_KEY = Symbol.for('ghostwatch.real-pi.registering-extension');

function trace(step: string, detail: Record<string, unknown> = {}): void {
  const file = process.env.GHOSTWATCH_REAL_PI_TRACE;
  if (!file) return;
  appendFileSync(file, `${JSON.stringify({ at: Date.now(), step, pid: process.pid, ...detail })}\n`);
}

function reconnectBaseMs(): number {
  const n = Number.parseInt(process.env.PI_SOCKET_RECONNECT_MS ?? '5000', 10);
  return Number.isFinite(n) && n > 0 ? n : 5000;
}

function processState(): AgentState {
  const holder = globalThis as unknown as Record<symbol, AgentState | undefined>;
  let state = holder[STATE_KEY];
  if (!state) {
    state = { cwd: process.cwd(), reconnectDelayMs: reconnectBaseMs(), stopping: false };
    holder[STATE_KEY] = state;
    process.on('exit', (code) => trace('exit', { code }));
  }
  return state;
}

function listenOn(port: number): Promise<WebSocketServer | undefined> {
  return new Promise((resolve, reject) => {
    const server = new WebSocketServer({ host: '127.0.0.1', port });
    server.once('listening', () => resolve(server));
    server.once('error', (error: NodeJS.ErrnoException) => {
      server.close();
      if (error.code === 'EADDRINUSE') resolve(undefined);
      else reject(error);
    });
  });
}

/** Sends one JSON frame to these Pi-DE connections; the trace has its type and size. */
function toPiDe(clients: Iterable<WebSocket>, payload: { type: string }): void {
  const text = JSON.stringify(payload);
  let to = 0;
  for (const ws of clients) {
    if (ws.readyState !== WebSocket.OPEN) continue;
    ws.send(text);
    to++;
  }
  trace('sent', { type: payload.type, bytes: Buffer.byteLength(text), to });
}

/** The branch's messages for a Pi-DE that connects, cut as pi-socket cuts them. */
function initState(state: AgentState): { type: 'init_state'; messages: unknown[]; tools: unknown[]; truncated?: true; totalMessages?: number } {
  const entries = state.ctx?.sessionManager.getBranch() ?? [];
  const messages = entries.flatMap((e) => (typeof e === 'object' && e !== null && (e as { type?: unknown }).type === 'message' ? [(e as { message: unknown }).message] : []));
  const tools = state.api?.getAllTools() ?? [];
  const size = JSON.stringify(messages).length;
  if (size <= INIT_STATE_BYTES) return { type: 'init_state', messages, tools };
  const keep = Math.max(INIT_STATE_KEEP, Math.floor((0.9 * INIT_STATE_BYTES) / (size / messages.length)));
  return { type: 'init_state', messages: messages.slice(-keep), tools, truncated: true, totalMessages: messages.length };
}

/** A frame from Pi-DE: a prompt, or a file to attach. */
function fromPiDe(state: AgentState, ws: WebSocket, text: string): void {
  let request: { type?: unknown; filename?: unknown; content?: unknown; mimeType?: unknown } | undefined;
  try {
    request = JSON.parse(text) as typeof request;
  } catch {
    request = undefined;
  }
  trace('received', { type: typeof request?.type === 'string' ? request.type : 'prompt', bytes: Buffer.byteLength(text) });
  const api = state.api;
  if (!api || !state.ctx) return;
  const deliver = state.ctx.isIdle() ? undefined : ({ deliverAs: 'followUp' } as const);
  if (request?.type === 'attach_file' && typeof request.content === 'string' && typeof request.mimeType === 'string') {
    api.sendUserMessage([{ type: 'image', data: request.content, mimeType: request.mimeType }], deliver);
    ws.send(JSON.stringify({ type: 'attach_file_ack', filename: request.filename, success: true }));
    return;
  }
  api.sendUserMessage(text, deliver);
}

async function openOwnServer(state: AgentState): Promise<void> {
  if (state.server) return;
  const start = Number.parseInt(process.env.PI_SOCKET_PORT ?? '8080', 10) || 8080;
  for (let port = start; port <= 65535; port++) {
    const server = await listenOn(port);
    if (!server) continue;
    state.server = server;
    state.port = port;
    server.on('connection', (ws) => {
      trace('pide-connected');
      toPiDe([ws], initState(state));
      ws.on('message', (data: Buffer) => fromPiDe(state, ws, data.toString('utf8')));
      ws.on('error', () => {});
    });
    trace('listening', { port });
    return;
  }
  throw new Error(`no free port from ${start} upward`);
}

function registryUrl(): string {
  const base = process.env.HYPIVISOR_WS || 'ws://localhost:31415/ws';
  const token = process.env.HYPI_TOKEN;
  return token ? `${base}?token=${encodeURIComponent(token)}` : base;
}

function sendRegister(state: AgentState, link: WebSocket): void {
  if (!state.nodeId || state.port === undefined) return;
  const params = { id: state.nodeId, machine: hostname(), cwd: state.cwd, port: state.port, status: 'active', pid: process.pid };
  link.send(JSON.stringify({ id: 'reg', method: 'register', params }));
  trace('register-sent', { id: state.nodeId, port: state.port });
}

/** Sends deregister for `id` and waits until ws has handed the frame to the socket. */
function sendDeregister(link: WebSocket, id: string): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, FLUSH_WAIT_MS);
    link.send(JSON.stringify({ id: 'dereg', method: 'deregister', params: { id } }), () => {
      clearTimeout(timer);
      trace('deregister-flushed', { id });
      resolve();
    });
  });
}

function scheduleReconnect(state: AgentState): void {
  if (state.stopping || state.reconnectTimer) return;
  const delay = state.reconnectDelayMs;
  state.reconnectDelayMs = Math.min(delay * 2, RECONNECT_CAP_MS);
  trace('reconnect-scheduled', { delayMs: delay });
  state.reconnectTimer = setTimeout(() => {
    state.reconnectTimer = undefined;
    connect(state);
  }, delay);
}

function connect(state: AgentState): void {
  if (state.stopping) return;
  let link: WebSocket;
  try {
    link = new WebSocket(registryUrl());
  } catch (error) {
    trace('bad-registry-url', { error: String(error) });
    return;
  }
  state.link = link;
  link.on('open', () => {
    state.reconnectDelayMs = reconnectBaseMs();
    trace('connected');
    sendRegister(state, link);
    clearInterval(state.pingTimer);
    state.pingTimer = setInterval(() => {
      if (link.readyState === WebSocket.OPEN) link.ping();
    }, PING_MS);
  });
  link.on('message', (data: Buffer) => {
    const text = data.toString('utf8');
    if (!text.includes('"event"')) trace('reply', { text });
  });
  link.on('error', (error) => trace('link-error', { error: error.message }));
  link.on('close', (code) => {
    clearInterval(state.pingTimer);
    state.pingTimer = undefined;
    if (state.link === link) state.link = undefined;
    trace('link-closed', { code });
    scheduleReconnect(state);
  });
}

export default function registeringExtension(pi: PiExtensionApi): void {
  const state = processState();
  trace('loaded');
  for (const name of RELAYED) pi.on(name, (event) => toPiDe(state.server?.clients ?? [], event));

  pi.on('session_start', async (event, ctx) => {
    state.nodeId = ctx.sessionManager.getSessionId();
    state.cwd = ctx.cwd;
    state.api = pi;
    state.ctx = ctx;
    trace('session_start', { reason: event.reason, id: state.nodeId });
    await openOwnServer(state);
    const link = state.link;
    if (link?.readyState === WebSocket.OPEN) sendRegister(state, link);
    else if (!link && !state.reconnectTimer) connect(state);
    // CONNECTING, or a reconnect pending: the open handler registers the current id.
  });

  pi.on('session_shutdown', async (event) => {
    const id = state.nodeId;
    trace('session_shutdown', { reason: event.reason, id });
    state.nodeId = undefined;
    const link = state.link;
    if (event.reason !== 'quit') {
      // /new, /resume, /fork, /reload: same process, same connection, a new id comes next.
      if (id && link?.readyState === WebSocket.OPEN) await sendDeregister(link, id);
      return;
    }
    state.stopping = true;
    clearTimeout(state.reconnectTimer);
    clearInterval(state.pingTimer);
    if (link) {
      link.removeAllListeners('close');
      if (id && link.readyState === WebSocket.OPEN) await sendDeregister(link, id);
      link.close();
      state.link = undefined;
    }
    state.server?.close();
    state.server = undefined;
    trace('shut-down');
  });
}
