// The sources' timing rules, exact, on fake timers against real servers on 127.0.0.1 (and a
// unix socket): the re-sync soon after a doubt, the jittered backoff of both daemon sources,
// and the defaults a client built by the CLI uses (401 retry 30 s, re-sync every 10 s).
// Only setTimeout/setInterval and Date are faked: sockets and setImmediate stay real.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { monitorSettings, CommandOptions } from '../../src/cli/settings.js';
import { buildSources } from '../../src/cli/engine-setup.js';
import { AgentctlSource } from '../../src/sources/agentctl/index.js';
import { DOUBT_RESYNC_MS, HYPIVISOR_DEFAULTS, HypivisorSource, type HypivisorOptions } from '../../src/sources/hypivisor/index.js';
import type { Source } from '../../src/sources/types.js';
import { node, startScriptedRegistry, type Script, type ScriptedRegistry } from '../support/scripted-registry.js';
import { sleepMs, until } from '../support/wait.js';

/** Advance the fake clock, then give real I/O a moment to carry whatever the timers sent. */
async function advance(ms: number): Promise<void> {
  vi.advanceTimersByTime(ms);
  await sleepMs(60);
}

const cleanups: (() => Promise<void> | void)[] = [];
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(async () => {
  vi.useRealTimers();
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function registry(script: Script = {}): Promise<ScriptedRegistry> {
  const r = await startScriptedRegistry({
    answer: (req) => (req.method === 'list_nodes' || req.method === 'list_claims' ? { id: req.id, result: [] } : undefined),
    ...script,
  });
  cleanups.push(() => r.close());
  return r;
}

function started<S extends Source>(source: S): S {
  cleanups.push(() => source.stop());
  source.start();
  return source;
}

function hypivisor(url: string, opts: Partial<HypivisorOptions> = {}): HypivisorSource {
  return started(new HypivisorSource({ url, resyncIntervalMs: 600_000, ...opts }));
}

/** The hypivisor source exactly as the CLI builds it for `--registry <url>`, no other flag. */
function hypivisorAsTheCliBuildsIt(url: string): Source {
  const settings = monitorSettings(new CommandOptions({ registry: url }), {}, tmpdir());
  const [source] = buildSources(settings);
  if (!source) throw new Error('no source built');
  return started(source);
}

const listNodes = (r: ScriptedRegistry) => r.requests.filter((q) => q.method === 'list_nodes').length;
const statusOf = (s: Source) => s.snapshot().state.status;

describe('a doubt brings a re-sync soon, not at the next periodic one', () => {
  it('invalid JSON: list_nodes arrives one second later, though the periodic re-sync is ten minutes away', async () => {
    const r = await registry();
    const c = hypivisor(r.url);
    await until(() => statusOf(c) === 'connected', 3_000, 'connected');
    r.send('{"event": "node_joined", "node": ');
    await until(() => c.snapshot().state.counters.invalidJson === 1, 3_000, 'the frame counted');
    await advance(DOUBT_RESYNC_MS - 1);
    expect(listNodes(r)).toBe(0);
    await advance(1);
    await until(() => listNodes(r) === 1, 3_000, 'the re-sync after the doubt');
    expect(DOUBT_RESYNC_MS).toBe(1_000);
  });

  it('an event about a node it never saw: the view has drifted, list_nodes repairs it', async () => {
    const r = await registry({ answer: (req) => ({ id: req.id, result: req.method === 'list_nodes' ? [node('ghost', { status: 'offline' })] : [] }) });
    const c = hypivisor(r.url);
    await until(() => statusOf(c) === 'connected', 3_000, 'connected');
    r.send({ event: 'node_offline', id: 'ghost' });
    await sleepMs(60);
    expect(c.snapshot().sessions).toEqual([]);
    await advance(1_000);
    await until(() => c.snapshot().sessions.length === 1, 3_000, 'the repaired view');
    expect(listNodes(r)).toBe(1);
    expect(c.snapshot().state).toMatchObject({ repaired: 1, resyncs: 1 });
  });

  it('a burst of garbage brings one re-sync, not one per frame', async () => {
    const r = await registry();
    const c = hypivisor(r.url);
    await until(() => statusOf(c) === 'connected', 3_000, 'connected');
    for (let i = 0; i < 5; i++) r.send('not json');
    await until(() => c.snapshot().state.counters.invalidJson === 5, 3_000, 'the frames counted');
    await advance(1_000);
    await until(() => listNodes(r) === 1, 3_000, 'the re-sync');
    await advance(900);
    expect(listNodes(r)).toBe(1);
  });

  it('a well-formed event it knows brings no re-sync', async () => {
    const r = await registry();
    const c = hypivisor(r.url);
    await until(() => statusOf(c) === 'connected', 3_000, 'connected');
    r.send({ event: 'node_joined', node: node('a') });
    await until(() => c.snapshot().sessions.length === 1, 3_000, 'the node');
    await advance(5_000);
    expect(listNodes(r)).toBe(0);
  });
});

describe('reconnects back off with jitter', () => {
  it('hypivisor: the next attempt is due at step / 2 + step / 2 * random', async () => {
    const r = await registry({ refuse: 503 });
    for (const [random, delay] of [[0, 500], [0.5, 750]] as const) {
      const c = hypivisor(r.url, { backoffInitialMs: 1_000, backoffMaxMs: 8_000, random: () => random });
      const s = await until(() => (statusOf(c) === 'unreachable' ? c.snapshot().state : undefined), 3_000, 'unreachable');
      expect(s.retryAt! - s.downSince!).toBe(delay);
    }
  });

  it('hypivisor: a failed attempt waits the jittered delay, not the bare step', async () => {
    const r = await registry({ refuse: 503 });
    const c = hypivisor(r.url, { backoffInitialMs: 1_000, backoffMaxMs: 1_000, random: () => 0 });
    await until(() => statusOf(c) === 'unreachable', 3_000, 'unreachable');
    expect(r.upgrades).toHaveLength(1);
    await advance(499);
    expect(r.upgrades).toHaveLength(1);
    await advance(1);
    await until(() => r.upgrades.length === 2, 3_000, 'the second attempt');
  });

  it('agentctl: the daemon gone, it comes back at the jittered delay too (it used the bare step, no jitter)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-agentctl-backoff-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const socketPath = join(dir, 'agentctl.sock');
    let connections = 0;
    // A daemon that hangs up on every connection.
    const server: Server = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const src = started(new AgentctlSource({ socketPath, host: 'devbox', backoffInitialMs: 1_000, backoffMaxMs: 1_000, random: () => 0 }));
    await until(() => connections === 1 && statusOf(src) !== 'connecting', 3_000, 'the first hang-up');
    await advance(499);
    expect(connections).toBe(1);
    await advance(1);
    await until(() => connections === 2, 3_000, 'the second attempt');
  });
});

describe('the defaults of a client built as the CLI builds it', () => {
  it('after HTTP 401 it tries again after exactly 30 s, not before', async () => {
    const r = await registry({ refuse: 401 });
    const c = hypivisorAsTheCliBuildsIt(r.url);
    const s = await until(() => (statusOf(c) === 'auth-refused' ? c.snapshot().state : undefined), 3_000, 'auth-refused');
    expect(s.retryAt! - s.since).toBe(30_000);
    expect(HYPIVISOR_DEFAULTS.authRetryMs).toBe(30_000);
    await advance(29_999);
    expect(r.upgrades).toHaveLength(1);
    await advance(1);
    await until(() => r.upgrades.length === 2, 3_000, 'the retry');
  });

  it('connected, it re-syncs with list_nodes every 10 s', async () => {
    const r = await registry();
    const c = hypivisorAsTheCliBuildsIt(r.url);
    await until(() => statusOf(c) === 'connected', 3_000, 'connected');
    await advance(9_999);
    expect(listNodes(r)).toBe(0);
    await advance(1);
    await until(() => listNodes(r) === 1, 3_000, 'the first periodic re-sync');
    await advance(10_000);
    await until(() => listNodes(r) === 2, 3_000, 'the second');
    expect(HYPIVISOR_DEFAULTS.resyncIntervalMs).toBe(10_000);
  });
});
