// Keys that land, end to end: tmux runs the built CLI against a real `ghostwatch serve` with real
// ghosts (registered children that were SIGKILLed). Several keys in one write are several keys;
// Esc clears a kept filter; a bulk eviction is cancelled mid-way (the registry is reached through
// a loopback relay that holds each deregister a moment, so the cancel lands between sends) and
// nothing is left half-done; a second Ctrl-C quits; b pages up where Ctrl-B, tmux's prefix, never
// arrives (typed through a real tmux client). Needs tmux and a built dist/ (CI builds first).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { startRegistryServer, type RegistryServer } from '../../src/server/index.js';
import { until } from '../support/wait.js';
import { attachClient, BIN, BUILT, HAS_TMUX, SHELL_PROMPT, tmuxOn, tuiEnv, typeAtPrompt } from '../support/tmux.js';
import { fileSleeper, killAndReap } from '../support/processes.js';

let panes = 0;
let socket = `gw-keys-${process.pid}-0`;
let current = tmuxOn(socket);
const tmux = (...args: string[]): string => current.run(...args);
const capture = (): string => current.capture();
const paneLines = (): string[] => capture().replace(/\n$/, '').split('\n');

let server: RegistryServer;
let relay: WebSocketServer;
let relayUrl = '';
/** How long the relay holds each deregister before passing it on. */
const HOLD_MS = 400;
const agents: WebSocket[] = [];

async function register(id: string, pid: number, port: number): Promise<void> {
  const ws = new WebSocket(server.url);
  agents.push(ws);
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  const done = new Promise((r) => ws.once('message', r));
  ws.send(JSON.stringify({ id: `r-${id}`, method: 'register', params: { id, machine: hostname(), cwd: '/tmp/e2e-keys', port, status: 'active', pid } }));
  await done;
}

async function ghost(id: string, port: number): Promise<void> {
  const c = fileSleeper();
  await register(id, c.pid, port);
  await killAndReap(c);
}

/** A loopback relay in front of the registry: everything passes, each deregister after HOLD_MS. */
async function startRelay(): Promise<void> {
  relay = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => relay.once('listening', r));
  relayUrl = `ws://127.0.0.1:${(relay.address() as { port: number }).port}/ws`;
  relay.on('connection', (client) => {
    const upstream = new WebSocket(server.url);
    const early: string[] = [];
    const forward = (text: string) => (upstream.readyState === WebSocket.OPEN ? upstream.send(text) : early.push(text));
    upstream.on('open', () => early.splice(0).forEach((t) => upstream.send(t)));
    upstream.on('message', (data) => client.readyState === WebSocket.OPEN && client.send(String(data)));
    client.on('message', (data) => {
      const text = String(data);
      if (/"method"\s*:\s*"deregister"/.test(text)) setTimeout(() => forward(text), HOLD_MS);
      else forward(text);
    });
    const end = () => {
      client.terminate();
      upstream.terminate();
    };
    client.on('close', end);
    upstream.on('close', end);
    upstream.on('error', end);
    client.on('error', end);
  });
}

function killPanes(): void {
  try {
    tmux('kill-server');
  } catch {
    // no tmux server yet
  }
}

async function startPane(url: string, state: string): Promise<void> {
  killPanes();
  socket = `gw-keys-${process.pid}-${++panes}`;
  current = tmuxOn(socket);
  const env = tuiEnv({ XDG_STATE_HOME: state });
  execFileSync('tmux', ['-L', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'gw', '-x', '100', '-y', '30', 'sh'], { env });
  await typeAtPrompt(current.run, current.capture, `node ${BIN} --registry ${url}`);
}

/** The id on the cursor's row ("> !ghost  ghost-03 ..."). */
function cursorRow(): string | undefined {
  return /^> \s?\S+\s+(\S+)/m.exec(capture())?.[1];
}

function audit(state: string): { kind: string; id?: string; detail?: string; notSent?: unknown[] }[] {
  const path = join(state, 'ghostwatch/evictions.jsonl');
  return existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
}

const registered = (): string[] => server.registry.listNodes().map((n: { id: string }) => n.id);

async function quitAndCheckShell(): Promise<void> {
  await until(() => tmux('display', '-p', '-t', 'gw', '#{alternate_on}').trim() === '0', 5000, 'the main screen');
  await until(() => SHELL_PROMPT.test(capture()), 3000, 'the shell prompt');
}

describe.runIf(HAS_TMUX && BUILT)('keys that land, in a real tmux pane', () => {
  beforeAll(async () => {
    server = await startRegistryServer({ port: 0, log: () => {} });
    await startRelay();
  });
  afterAll(async () => {
    killPanes();
    for (const a of agents) a.terminate();
    for (const c of relay?.clients ?? []) c.terminate();
    await new Promise((r) => (relay ? relay.close(r) : r(undefined)));
    await server?.close();
  });

  it('jjj in one write moves three rows; Esc clears a kept filter; qq in one write quits', async () => {
    for (let i = 0; i < 6; i++) await ghost(`chunk-${i}`, 9200 + i);
    const state = mkdtempSync(join(tmpdir(), 'gw-keys-'));
    await startPane(server.url, state);
    await until(() => (capture().match(/!ghost\s+chunk-/g) ?? []).length === 6, 8000, 'six ghosts on screen');
    await until(() => cursorRow() === 'chunk-0', 3000, 'the cursor on the first row');

    // -l: the three bytes go to the pane in one write, as a fast typist or SSH delivers them.
    tmux('send-keys', '-t', 'gw', '-l', 'jjj');
    await until(() => cursorRow() === 'chunk-3', 3000, 'the cursor three rows down');
    tmux('send-keys', '-t', 'gw', '-l', 'kk');
    await until(() => cursorRow() === 'chunk-1', 3000, 'the cursor two rows up');

    tmux('send-keys', '-t', 'gw', '-l', '/chunk-4');
    tmux('send-keys', '-t', 'gw', 'Enter');
    await until(() => /filter "chunk-4"/.test(capture()), 3000, 'the kept filter');
    expect(capture().match(/!ghost\s+chunk-/g)).toHaveLength(1);
    tmux('send-keys', '-t', 'gw', 'Escape');
    await until(() => (capture().match(/!ghost\s+chunk-/g) ?? []).length === 6 && !/filter "/.test(capture()), 3000, 'every row back after Esc');

    tmux('send-keys', '-t', 'gw', '-l', 'qq');
    await quitAndCheckShell();
    // Nothing was evicted on the way.
    expect(audit(state)).toEqual([]);
  });

  it("inside tmux, b pages up where Ctrl-B (tmux's prefix) never arrives, and the help says PgUp b: typed through a real client", async () => {
    const ids = Array.from({ length: 40 }, (_, i) => `page-${String(i).padStart(2, '0')}`);
    for (const [i, id] of ids.entries()) await ghost(id, 9500 + i);
    const state = mkdtempSync(join(tmpdir(), 'gw-keys-'));
    await startPane(server.url, state);
    // Keys typed into a tmux client (its own terminal), as a person types them: tmux sees them first.
    const client = await attachClient(socket, 'gw');
    const outer = tmuxOn(`${socket}-outer`);
    const type = (...keys: string[]): void => void outer.run('send-keys', '-t', 'client', ...keys);
    try {
      await until(() => /VERDICT/.test(capture()), 8000, 'the table');
      type('-l', '/page-');
      type('Enter');
      await until(() => /filter "page-"/.test(capture()) && (capture().match(/!ghost\s+page-/g) ?? []).length > 5, 8000, 'the kept filter');
      type('G');
      await until(() => cursorRow() === 'page-39', 3000, 'the cursor on the last row');
      const page = (capture().match(/!ghost\s+page-/g) ?? []).length;
      expect(page).toBeLessThan(39);
      // Ctrl-B is tmux's prefix: tmux takes it and the key after it (k, unbound there); the next k is
      // ours, one row up. Had Ctrl-B arrived, the cursor would have gone up a page first.
      type('C-b');
      type('k');
      type('k');
      await until(() => cursorRow() === 'page-38', 3000, 'one row up, no page');
      type('b');
      const expected = ids[38 - page]!;
      await until(() => cursorRow() === expected, 3000, `a page (${page} rows) up: ${expected}`);
      type('?');
      await until(() => /page up/.test(capture()), 3000, 'the help');
      expect(capture()).toMatch(/^ {2}PgUp b\s+page up$/m);
      expect(capture()).not.toMatch(/Ctrl-B/);
      type('q');
      await until(() => /VERDICT/.test(capture()), 3000, 'back to the table');
      type('q');
      await quitAndCheckShell();
    } finally {
      client.stop();
      // Forty rows would push the next tests' rows off their pane: they go, as a deregister would.
      for (const id of ids) server.registry.removeNode(id, { kind: 'deregistered' });
    }
  });

  it('a paste is one piece: in the table it does nothing (a pasted "Xy" evicts nothing), at the filter prompt it is the text', async () => {
    for (let i = 0; i < 3; i++) await ghost(`paste-${i}`, 9250 + i);
    const state = mkdtempSync(join(tmpdir(), 'gw-keys-'));
    await startPane(server.url, state);
    await until(() => (capture().match(/!ghost\s+paste-/g) ?? []).length === 3, 8000, 'three ghosts on screen');
    // The monitor asked for bracketed paste: tmux's paste-buffer -p wraps the text in ESC[200~ ... ESC[201~.
    tmux('set-buffer', 'Xy');
    tmux('paste-buffer', '-p', '-t', 'gw');
    await new Promise((r) => setTimeout(r, 500));
    expect(capture()).not.toMatch(/Evict \d+ entr/);
    expect(audit(state)).toEqual([]);
    tmux('send-keys', '-t', 'gw', '/');
    await until(() => /\/_/.test(capture()) || /filter/.test(capture()), 3000, 'the filter prompt');
    tmux('set-buffer', 'paste-1\nXy');
    tmux('paste-buffer', '-p', '-t', 'gw');
    tmux('send-keys', '-t', 'gw', 'Enter');
    await until(() => /filter "paste-1 Xy"/.test(capture()), 3000, 'the pasted text as the filter, the line break a space');
    expect(audit(state)).toEqual([]);
    tmux('send-keys', '-t', 'gw', '-l', 'qq');
    await quitAndCheckShell();
  });

  it.each([
    ['Esc', 'Escape'],
    ['Ctrl-C', 'C-c'],
  ])('%s cancels a bulk eviction after the entry being sent: the rest not sent, nothing half-done, the cancel audited', async (_name, key) => {
    const ids = Array.from({ length: 10 }, (_, i) => `bulk-${key}-${String(i).padStart(2, '0')}`);
    for (const [i, id] of ids.entries()) await ghost(id, 9300 + i);
    const before = new Set(registered());
    const state = mkdtempSync(join(tmpdir(), 'gw-keys-'));
    await startPane(relayUrl, state);
    // Only these ghosts: the filter narrows the view, and X evicts what the view shows.
    await until(() => /VERDICT/.test(capture()), 8000, 'the table');
    tmux('send-keys', '-t', 'gw', '-l', `/bulk-${key}-`);
    tmux('send-keys', '-t', 'gw', 'Enter');
    await until(() => new RegExp(`filter "bulk-${key}-"`).test(capture()), 3000, 'the kept filter');
    await until(() => (capture().match(new RegExp(`!ghost\\s+bulk-${key}-`, 'g')) ?? []).length === 10, 8000, 'the ghosts on screen');
    tmux('send-keys', '-t', 'gw', 'X');
    await until(() => /Evict 10 entries from the registry\?/.test(capture()), 3000, 'the dialog');
    expect(capture()).toMatch(new RegExp(`10 shown of \\d+ problems; filter: bulk-${key}-`));
    tmux('send-keys', '-t', 'gw', 'y');
    await until(() => /evicting 2\/10: .*: sending/.test(capture()), 8000, 'the second send under way');
    tmux('send-keys', '-t', 'gw', key);
    await until(() => /cancelled: \d+ not sent, evicted \d+/.test(capture()), 10_000, 'the cancelled summary');

    const [, notSent, evicted] = /cancelled: (\d+) not sent, evicted (\d+)/.exec(capture())!.map(Number);
    expect(evicted! + notSent!).toBe(10);
    expect(evicted).toBeGreaterThanOrEqual(2);
    expect(notSent).toBeGreaterThanOrEqual(1);
    // The registry lost exactly the evicted ones; the rest are still there.
    const left = ids.filter((id) => registered().includes(id));
    expect(left).toHaveLength(notSent!);
    expect(ids.filter((id) => !before.has(id))).toEqual([]);

    // Nothing half-done: every intent has its outcome, and one cancel line names what was not sent.
    const lines = audit(state);
    const intents = lines.filter((l) => l.kind === 'intent').map((l) => l.id);
    const outcomes = lines.filter((l) => l.kind === 'outcome').map((l) => l.id);
    expect(outcomes).toEqual(intents);
    expect(intents).toHaveLength(evicted!);
    const cancels = lines.filter((l) => l.kind === 'cancel');
    expect(cancels).toHaveLength(1);
    expect(cancels[0]!.notSent).toHaveLength(notSent!);
    expect(lines.at(-1)!.kind).toBe('cancel');

    tmux('send-keys', '-t', 'gw', 'q');
    await quitAndCheckShell();
  });

  it('a second Ctrl-C quits: the send under way finishes and is audited, nothing more is sent', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `twice-${String(i).padStart(2, '0')}`);
    for (const [i, id] of ids.entries()) await ghost(id, 9400 + i);
    const state = mkdtempSync(join(tmpdir(), 'gw-keys-'));
    await startPane(relayUrl, state);
    await until(() => /VERDICT/.test(capture()), 8000, 'the table');
    tmux('send-keys', '-t', 'gw', '-l', '/twice-');
    tmux('send-keys', '-t', 'gw', 'Enter');
    await until(() => /filter "twice-"/.test(capture()), 3000, 'the kept filter');
    await until(() => (capture().match(/!ghost\s+twice-/g) ?? []).length === 10, 8000, 'the ghosts on screen');
    tmux('send-keys', '-t', 'gw', 'X');
    await until(() => /Evict 10 entries/.test(capture()), 3000, 'the dialog');
    tmux('send-keys', '-t', 'gw', 'y');
    await until(() => /evicting 2\/10: .*: sending/.test(capture()), 8000, 'the second send under way');
    tmux('send-keys', '-t', 'gw', 'C-c');
    await until(() => /cancelling: stops after the entry being sent; Ctrl-C again quits/.test(capture()), 3000, 'the cancel said');
    tmux('send-keys', '-t', 'gw', 'C-c');
    await quitAndCheckShell();
    const atPrompt = capture();
    const quitAt = Date.now();
    expect(paneLines().join('\n')).not.toMatch(/VERDICT/);
    // How it ended, for the message if the audit is not whole: its exit status and what it printed.
    tmux('send-keys', '-t', 'gw', 'echo "gw-exit=$?"', 'Enter');
    try {
      await until(() => /gw-exit=\d+/.test(capture()), 15_000, 'the exit status');
    } catch {
      throw new Error(`no exit status; at the prompt: ${JSON.stringify(atPrompt)}; now: ${JSON.stringify(capture())}`);
    }
    const ended = `${capture().trim()} (exit seen ${Date.now() - quitAt} ms after the prompt) at prompt: ${JSON.stringify(atPrompt)}`;

    const lines = audit(state);
    const intents = lines.filter((l) => l.kind === 'intent').map((l) => l.id);
    expect(lines.filter((l) => l.kind === 'outcome').map((l) => l.id), `${ended}\n${JSON.stringify(lines)}`).toEqual(intents);
    expect(ended).toMatch(/gw-exit=0/);
    expect(intents.length).toBeLessThan(10);
    expect(ids.filter((id) => registered().includes(id))).toHaveLength(10 - intents.length);
  });
});
