// A registry connection that drops: its rows stay in the engine's snapshot as the last known,
// marked stale with the time they were last current, and no eviction path sends anything for
// them, forced or not, until the source reads the registry again and fresh rows replace them.
import { describe, expect, it } from 'vitest';
import { staleOf } from '../../src/engine/types.js';
import { HypivisorSource } from '../../src/sources/hypivisor/index.js';
import { node, startScriptedRegistry } from '../support/scripted-registry.js';
import { deadPid, engineFor, HOST, onCleanup, until } from './helpers.js';

describe('stale rows of a source that is not reading', () => {
  it('are kept, marked, never evicted, and replaced once the source reads again', async () => {
    // A ghost: a child of ours, killed and reaped, whose registration stays.
    const pid = await deadPid();
    const r = await startScriptedRegistry({
      init: () => ({ event: 'init', protocol_version: '1', claims: [], nodes: [node('ghost-1', { pid, machine: HOST })] }),
      answer: (req) => (req.method === 'list_nodes' ? { id: req.id, result: [node('ghost-1', { pid, machine: HOST })] } : { id: req.id, result: { status: 'deregistered' } }),
    });
    onCleanup(() => r.close());
    // The first retry waits long enough to try the eviction while it is down.
    const source = new HypivisorSource({ url: r.url, requestTimeoutMs: 1000, resyncIntervalMs: 60_000, backoffInitialMs: 3_000, backoffMaxMs: 3_000 });
    const engine = engineFor([source]);
    const ghost = await until(() => engine.getSnapshot().findings.find((f) => f.id === 'ghost-1' && f.verdict === 'ghost'), 5000, 'the ghost');
    expect(staleOf(ghost)).toBeUndefined();
    expect(ghost.evictable).toBe(true);

    const t0 = Date.now();
    for (const ws of r.sockets()) ws.terminate();
    const stale = await until(() => engine.getSnapshot().findings.find((f) => f.id === 'ghost-1' && staleOf(f)), 3000, 'the stale row');
    expect(stale.verdict).toBe('ghost');
    expect(stale.evictable).toBe(false);
    expect(staleOf(stale)).toMatchObject({ source: 'hypivisor', why: 'connection dropped' });
    expect(staleOf(stale)!.since).toBeGreaterThanOrEqual(t0);

    // Neither the row as it was nor the stale row is sent, even forced.
    for (const selection of [[ghost], [stale]]) {
      const summary = await engine.evict({ selection, force: true });
      expect(summary.results).toHaveLength(1);
      expect(summary.results[0]).toMatchObject({ outcome: 'skipped', detail: 'stale: hypivisor is not connected (connection dropped); nothing was sent' });
    }
    expect(r.requests.filter((q) => q.method === 'deregister')).toEqual([]);

    // Back: the fresh row replaces the stale one, evictable again; a row chosen while stale is still not sent.
    const fresh = await until(() => engine.getSnapshot().findings.find((f) => f.id === 'ghost-1' && !staleOf(f)), 8000, 'the fresh row');
    expect(fresh.evictable).toBe(true);
    const late = await engine.evict({ selection: [stale], force: true });
    expect(late.results[0]).toMatchObject({ outcome: 'skipped', detail: 'stale: it was chosen while stale; look at it again; nothing was sent' });
    expect(r.requests.filter((q) => q.method === 'deregister')).toEqual([]);
    const done = await engine.evict({ selection: [fresh], force: false });
    expect(done.results[0]?.outcome).toBe('evicted');
  }, 20_000);
});
