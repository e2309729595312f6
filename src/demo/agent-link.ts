// The line between the demo and an agent it runs in a tmux pane (pane-agents.ts). Such an agent is
// the child of tmux, not of the demo: no pipe joins them. It connects to a Unix socket the demo
// listens on for it alone, in a folder of its own (0700: only this user reaches it), says the key
// the demo gave it, then writes its reports there. The socket does what the pipes did: the demo
// reads the reports; when the demo dies, however (SIGKILL too), the kernel closes its end and the
// agent reads end of file and stops; when the agent's process ends, the demo reads end of file.
// The agent keeps its side open until it exits (allowHalfOpen), so "closed" means "ended".
// Once the agent is connected the folder goes (the connection does not need it): a demo that is
// SIGKILLed leaves nothing in the temp folder unless an agent was starting right then.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** The demo's side of one agent's line. */
export interface AgentLink {
  /** The socket the agent connects to ($GHOSTWATCH_DEMO_LINK). */
  readonly path: string;
  /** What the agent says first ($GHOSTWATCH_DEMO_LINK_KEY). */
  readonly key: string;
  /** Resolves when the agent has connected and said its key. */
  readonly connected: Promise<void>;
  /** Resolves when the line is over: the agent's process ended, or the line was destroyed. */
  readonly closed: Promise<void>;
  /** "Please leave": the agent reads end of file and stops (now, or as soon as it connects). */
  end(): void;
  /** No more of this line: not listening, not connected, the folder removed. */
  destroy(): void;
  /** Synchronous last resort (process 'exit'): the folder removed; the kernel closes the rest. */
  removeSync(): void;
}

/** Listens for one agent; its report lines go to `onLine`. */
export function openLink(onLine: (line: string) => void): Promise<AgentLink> {
  const dir = mkdtempSync(join(tmpdir(), 'ghostwatch-demo-'));
  const path = join(dir, 'link.sock');
  const key = randomUUID();
  const server = createServer();
  let socket: Socket | undefined;
  let ending = false;
  let connected: () => void = () => {};
  let closed: () => void = () => {};
  const removeSync = (): void => rmSync(dir, { recursive: true, force: true });
  // An open connection outlives both the listening socket and its file.
  const stopListening = (): void => {
    if (server.listening) server.close();
    removeSync();
  };
  const link: AgentLink = {
    path,
    key,
    connected: new Promise((resolve) => (connected = resolve)),
    closed: new Promise((resolve) => (closed = resolve)),
    end: () => {
      ending = true;
      socket?.end();
    },
    destroy: () => {
      stopListening();
      socket?.destroy();
      closed();
    },
    removeSync,
  };

  server.on('connection', (s) => {
    s.on('error', () => {}); // a reset is an ending like any other: 'close' follows
    let mine = false;
    s.once('close', () => {
      if (mine) closed();
    });
    createInterface({ input: s }).on('line', (line) => {
      if (mine) return onLine(line);
      // The key first, once: anything else is not our agent.
      if (socket !== undefined || line !== key) return void s.destroy();
      mine = true;
      socket = s;
      stopListening();
      connected();
      if (ending) s.end();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', (error) => {
      removeSync();
      reject(error);
    });
    server.listen(path, () => resolve(link));
  });
}

/**
 * The agent's side: connects to `path` and says `key`. Resolves with the socket, kept half-open
 * (the agent's side stays open until its process ends, whatever the demo does with its own).
 */
export function connectLink(path: string, key: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path, allowHalfOpen: true });
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.write(`${key}\n`);
      resolve(socket);
    });
  });
}
