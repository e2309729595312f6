// The eviction executor against a real registry: re-verified right before sending, audited before
// and after, never sent when the entry changed, the log cannot be written or the mode is read-only.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Finding } from '../../src/core/types.js';
import type { EvictProgress, LiveEngine } from '../../src/engine/index.js';
import { startScriptedRegistry } from '../support/scripted-registry.js';
import { HypivisorSource } from '../../src/sources/hypivisor/index.js';
import {
  HOST,
  agent,
  call,
  deadPid,
  engineFor,
  finding,
  listNodes,
  onCleanup,
  register,
  serve,
  sleeper,
  source,
  tempDir,
  until,
} from './helpers.js';

afterEach(() => {
  vi.restoreAllMocks();
});

function auditPath(): string {
  return join(tempDir(), 'state', 'ghostwatch', 'evictions.jsonl');
}

function auditLines(path: string): Record<string, unknown>[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
}

async function when(engine: LiveEngine, id: string, verdict: string): Promise<Finding> {
  return until(() => {
    const f = finding(engine.getSnapshot(), id);
    return f?.verdict === verdict ? f : undefined;
  }, 3000, `${id} ${verdict}`);
}

const ids = async (url: string): Promise<string[]> => (await listNodes(url)).map((n) => n.id).sort();

describe('evict: a ghost, end to end', () => {
  it('deregisters it, audits intent then outcome under one id in a 0600 file, and reports progress in order', async () => {
    const s = await serve();
    await agent(s.url, 'gone1', { pid: await deadPid() });
    await agent(s.url, 'stays', { pid: sleeper().pid });
    const log = auditPath();
    const engine = engineFor([source(s.url)], { auditLogPath: log, actor: 'tester@box' });
    const ghost = await when(engine, 'gone1', 'ghost');
    const kill = vi.spyOn(process, 'kill');

    const progress: EvictProgress[] = [];
    const summary = await engine.evict({ selection: [ghost], force: false, onProgress: (p) => progress.push(p) });

    expect(summary.results).toEqual([{ finding: ghost, outcome: 'evicted', detail: undefined, forced: false }]);
    expect(summary.counts).toEqual({ evicted: 1, 'already-gone': 0, skipped: 0, refused: 0, failed: 0 });
    expect(await ids(s.url)).toEqual(['stays']);
    await until(() => finding(engine.getSnapshot(), 'gone1') === undefined, 2000, 'row gone');
    expect(progress.map((p) => [p.index, p.total, p.phase])).toEqual([
      [1, 1, 'checking'],
      [1, 1, 'sending'],
      [1, 1, 'evicted'],
    ]);
    // The engine only ever asks kill(pid, 0); it never signals a process.
    expect(kill).toHaveBeenCalled(); // the re-probe
    expect(kill.mock.calls.every((c) => c[1] === 0)).toBe(true);

    const [intent, outcome, ...rest] = auditLines(log);
    expect(rest).toEqual([]);
    expect(intent).toMatchObject({
      kind: 'intent',
      actor: 'tester@box',
      host: HOST,
      action: { type: 'deregister', source: 'hypivisor', id: 'gone1' },
      forced: false,
      verdict: 'ghost',
      evidence: { kill: 'ESRCH', host: { local: true } },
      entry: { id: 'gone1', machine: HOST },
    });
    expect(typeof intent?.id).toBe('string');
    expect(new Date(String(intent?.ts)).toISOString()).toBe(intent?.ts);
    expect(outcome).toMatchObject({ kind: 'outcome', id: intent?.id, outcome: 'evicted' });
    expect(statSync(log).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(log)).mode & 0o777).toBe(0o700);
  });

  it('releases a stale claim before deregistering its ghost holder', async () => {
    const s = await serve();
    const ws = await agent(s.url, 'holder1', { pid: await deadPid() });
    expect(await call(ws, 'claim', { resource: '/repo/lock', holder: 'holder1' })).toMatchObject({ result: { status: 'claimed' } });
    const log = auditPath();
    const engine = engineFor([source(s.url)], { auditLogPath: log });
    const holder = await when(engine, 'holder1', 'ghost');
    const claim = await when(engine, '/repo/lock', 'stale-claim');

    const summary = await engine.evict({ selection: [holder, claim], force: false });
    expect(summary.results.map((r) => [r.finding.id, r.outcome])).toEqual([
      ['/repo/lock', 'evicted'],
      ['holder1', 'evicted'],
    ]);
    expect(await ids(s.url)).toEqual([]);
    expect((await call(ws, 'list_claims')).result).toEqual([]);
    expect(auditLines(log).map((l) => [l.kind, (l.action as { type?: string } | undefined)?.type ?? l.outcome])).toEqual([
      ['intent', 'release-claim'],
      ['outcome', 'evicted'],
      ['intent', 'deregister'],
      ['outcome', 'evicted'],
    ]);
  });
});

describe('evict: re-verified right before sending', () => {
  it('skips an entry that turned live between plan and send: nothing sent, the skip audited', async () => {
    const s = await serve();
    const ws = await agent(s.url, 'flip', { pid: await deadPid() });
    const log = auditPath();
    const engine = engineFor([source(s.url)], { auditLogPath: log });
    const ghost = await when(engine, 'flip', 'ghost');

    // The same id registers again, now with a live process, after the person saw it dead.
    const child = sleeper();
    await register(ws, 'flip', { pid: child.pid });
    await until(() => finding(engine.getSnapshot(), 'flip')?.entry.pid === child.pid, 2000, 'new pid seen');

    const summary = await engine.evict({ selection: [ghost], force: false });
    expect(summary.results).toHaveLength(1);
    expect(summary.results[0]).toMatchObject({ outcome: 'skipped' });
    expect(summary.results[0]?.detail).toMatch(/now live/);
    expect(summary.results[0]?.detail).toContain(`is now ${child.pid}`);
    expect(await listNodes(s.url)).toEqual([expect.objectContaining({ id: 'flip', pid: child.pid })]);
    const lines = auditLines(log);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ kind: 'skip', outcome: 'skipped', verdict: 'live', planned: { verdict: 'ghost' } });
    expect(lines[0]?.detail).toMatch(/now live/);
  });

  it('reports an entry that left the registry meanwhile as already gone, without sending', async () => {
    const s = await serve();
    const ws = await agent(s.url, 'leaving', { pid: await deadPid() });
    const engine = engineFor([source(s.url)]);
    const ghost = await when(engine, 'leaving', 'ghost');
    await call(ws, 'deregister', { id: 'leaving' });
    await until(() => finding(engine.getSnapshot(), 'leaving') === undefined, 2000, 'left');
    const summary = await engine.evict({ selection: [ghost], force: false });
    expect(summary.results[0]).toMatchObject({ outcome: 'already-gone', detail: 'no longer in the registry' });
  });

  it('a live entry needs force: without it nothing is sent, with it the entry is evicted', async () => {
    const s = await serve();
    await agent(s.url, 'alive1', { pid: sleeper().pid });
    const log = auditPath();
    const engine = engineFor([source(s.url)], { auditLogPath: log });
    const live = await when(engine, 'alive1', 'live');

    const refused = await engine.evict({ selection: [live], force: false });
    expect(refused.needsForce).toEqual([live]);
    expect(refused.results).toEqual([]);
    expect(await ids(s.url)).toEqual(['alive1']);
    expect(existsSync(log)).toBe(false);

    const forced = await engine.evict({ selection: [live], force: true });
    expect(forced.results[0]).toMatchObject({ outcome: 'evicted', forced: true });
    expect(await ids(s.url)).toEqual([]);
    expect(auditLines(log)[0]).toMatchObject({ kind: 'intent', forced: true, verdict: 'live' });
  });
});

describe('evict: when it must not send, or cannot', () => {
  it('does not send when the audit log cannot be written', async () => {
    const s = await serve();
    await agent(s.url, 'kept', { pid: await deadPid() });
    const file = join(tempDir(), 'a-regular-file');
    writeFileSync(file, '');
    const log = join(file, 'ghostwatch', 'evictions.jsonl');
    const engine = engineFor([source(s.url)], { auditLogPath: log });
    const ghost = await when(engine, 'kept', 'ghost');
    const progress: string[] = [];

    const summary = await engine.evict({ selection: [ghost], force: false, onProgress: (p) => progress.push(p.phase) });
    expect(summary.results[0]?.outcome).toBe('failed');
    expect(summary.results[0]?.detail).toMatch(/^cannot write the audit log \(.*a-regular-file.*\): .*ENOTDIR/);
    expect(progress).toEqual(['checking', 'failed']);
    expect(await ids(s.url)).toEqual(['kept']);
  });

  it('sends nothing when the registry cannot be re-read right before sending', async () => {
    const pid = await deadPid();
    const registry = await startScriptedRegistry({
      init: () => ({ event: 'init', protocol_version: '1', nodes: [{ id: 'mute', machine: HOST, cwd: '/r', port: 5003, status: 'active', pid }], claims: [] }),
      answer: () => undefined, // drops every request, as hypivisor does with a malformed one
    });
    onCleanup(() => registry.close());
    const engine = engineFor([new HypivisorSource({ url: registry.url, requestTimeoutMs: 200 })], { auditLogPath: auditPath() });
    const f = await when(engine, 'mute', 'ghost');
    const summary = await engine.evict({ selection: [f], force: false });
    expect(summary.results.map((r) => [r.outcome, r.detail])).toEqual([['failed', expect.stringMatching(/could not re-read the registry/)]]);
    expect(registry.requests.map((q) => q.method)).not.toContain('deregister');
  });

  it('reports a registry refusal with its text and goes on with the next entry', async () => {
    const [pidA, pidB] = [await deadPid(), await deadPid()];
    const node = (id: string, pid: number, port: number) => ({ id, machine: HOST, cwd: '/repo', port, status: 'active', pid });
    const registry = await startScriptedRegistry({
      init: () => ({ event: 'init', protocol_version: '1', nodes: [node('ghostA', pidA, 5001), node('ghostB', pidB, 5002)], claims: [] }),
      answer: (req) => {
        // The executor re-reads the registry before each send.
        if (req.method === 'list_nodes') return { id: req.id, result: [node('ghostA', pidA, 5001), node('ghostB', pidB, 5002)] };
        if (req.method === 'list_claims') return { id: req.id, result: [] };
        if (req.method !== 'deregister') return undefined;
        const target = (req.params as { id?: string } | undefined)?.id;
        return target === 'ghostA'
          ? { id: req.id, error: 'Unauthorized: cannot deregister another node' }
          : { id: req.id, result: { status: 'deregistered' } };
      },
    });
    onCleanup(() => registry.close());
    const log = auditPath();
    const engine = engineFor([source(registry.url)], { auditLogPath: log });
    const a = await when(engine, 'ghostA', 'ghost');
    const b = await when(engine, 'ghostB', 'ghost');

    const progress: EvictProgress[] = [];
    const summary = await engine.evict({ selection: [a, b], force: false, onProgress: (p) => progress.push(p) });
    expect(summary.results.map((r) => [r.finding.id, r.outcome, r.detail])).toEqual([
      ['ghostA', 'refused', 'Unauthorized: cannot deregister another node'],
      ['ghostB', 'evicted', undefined],
    ]);
    expect(summary.counts).toMatchObject({ refused: 1, evicted: 1 });
    expect(progress.map((p) => `${p.index}/${p.total} ${p.phase}`)).toEqual([
      '1/2 checking',
      '1/2 sending',
      '1/2 refused',
      '2/2 checking',
      '2/2 sending',
      '2/2 evicted',
    ]);
    expect(registry.requests.filter((r) => r.method === 'deregister').map((r) => r.params)).toEqual([{ id: 'ghostA' }, { id: 'ghostB' }]);
    const lines = auditLines(log);
    expect(lines.map((l) => [l.kind, l.outcome ?? (l.entry as { id: string }).id])).toEqual([
      ['intent', 'ghostA'],
      ['outcome', 'refused'],
      ['intent', 'ghostB'],
      ['outcome', 'evicted'],
    ]);
    expect(lines[1]).toMatchObject({ id: lines[0]?.id, detail: 'Unauthorized: cannot deregister another node' });
  });

  it('read-only: every selected row fails with the reason, nothing is written or sent', async () => {
    const s = await serve();
    await agent(s.url, 'ro-ghost', { pid: await deadPid() });
    await agent(s.url, 'ro-live', { pid: sleeper().pid });
    const log = auditPath();
    const engine = engineFor([source(s.url)], { auditLogPath: log, readOnly: true });
    const ghost = await when(engine, 'ro-ghost', 'ghost');
    const live = await when(engine, 'ro-live', 'live');

    const summary = await engine.evict({ selection: [ghost, live], force: false });
    expect(summary.results.map((r) => [r.finding.id, r.outcome, r.detail])).toEqual([
      ['ro-ghost', 'failed', 'read-only mode: nothing is evicted'],
      ['ro-live', 'failed', 'read-only mode: nothing is evicted'],
    ]);
    expect(summary.needsForce).toEqual([]);
    expect(existsSync(dirname(log))).toBe(false);
    expect(await ids(s.url)).toEqual(['ro-ghost', 'ro-live']);
  });
});

describe('evict: cancelled mid-run', () => {
  it('stops after the entry being sent: the rest is not audited or sent, reported as not sent, and the cancel is audited', async () => {
    const s = await serve();
    const names = ['c1', 'c2', 'c3', 'c4'];
    for (const id of names) await agent(s.url, id, { pid: await deadPid() });
    const log = auditPath();
    const engine = engineFor([source(s.url)], { auditLogPath: log, actor: 'tester@box' });
    const ghosts = [];
    for (const id of names) ghosts.push(await when(engine, id, 'ghost'));

    // The cancel lands while the second entry is being sent: that one goes through to its end.
    const cancel = new AbortController();
    const progress: EvictProgress[] = [];
    const summary = await engine.evict({
      selection: ghosts,
      force: false,
      signal: cancel.signal,
      onProgress: (p) => {
        progress.push(p);
        if (p.index === 2 && p.phase === 'sending') cancel.abort();
      },
    });

    const sent = summary.results.map((r) => [r.finding.id, r.outcome]);
    expect(sent).toEqual([
      [ghosts[0]!.id, 'evicted'],
      [ghosts[1]!.id, 'evicted'],
    ]);
    expect(summary.notSent?.map((f) => f.id)).toEqual([ghosts[2]!.id, ghosts[3]!.id]);
    expect(await ids(s.url)).toEqual([ghosts[2]!.id, ghosts[3]!.id].sort());
    expect(progress.filter((p) => p.index > 2)).toEqual([]);

    const lines = auditLines(log);
    expect(lines.map((l) => l.kind)).toEqual(['intent', 'outcome', 'intent', 'outcome', 'cancel']);
    expect(lines[4]).toMatchObject({ kind: 'cancel', actor: 'tester@box', host: HOST, detail: 'cancelled after 2 of 4; 2 not sent' });
    expect((lines[4]!.notSent as { id: string }[]).map((a) => a.id)).toEqual([ghosts[2]!.id, ghosts[3]!.id]);
  });

  it('a cancel before the run starts sends nothing and says so', async () => {
    const s = await serve();
    await agent(s.url, 'k1', { pid: await deadPid() });
    const log = auditPath();
    const engine = engineFor([source(s.url)], { auditLogPath: log });
    const ghost = await when(engine, 'k1', 'ghost');
    const summary = await engine.evict({ selection: [ghost], force: false, signal: AbortSignal.abort() });
    expect(summary.results).toEqual([]);
    expect(summary.notSent).toEqual([ghost]);
    expect(await ids(s.url)).toEqual(['k1']);
    expect(auditLines(log).map((l) => l.kind)).toEqual(['cancel']);
  });
});

describe('evict: the engine stopped mid-run (the second Ctrl-C)', () => {
  it('finishes the entry being sent, with its outcome, and sends nothing after it', async () => {
    const s = await serve();
    await agent(s.url, 's1', { pid: await deadPid() });
    await agent(s.url, 's2', { pid: await deadPid() });
    const log = auditPath();
    const engine = engineFor([source(s.url)], { auditLogPath: log });
    const ghosts = [await when(engine, 's1', 'ghost'), await when(engine, 's2', 'ghost')];
    let stopping: Promise<void> | undefined;
    const summary = await engine.evict({
      selection: ghosts,
      force: false,
      onProgress: (p) => {
        if (p.index === 1 && p.phase === 'sending') stopping = engine.stop();
      },
    });
    await stopping;
    expect(summary.results.map((r) => [r.finding.id, r.outcome, r.detail])).toEqual([
      ['s1', 'evicted', undefined],
      ['s2', 'failed', 'ghostwatch stopped before it was sent'],
    ]);
    expect(await ids(s.url)).toEqual(['s2']);
    expect(auditLines(log).map((l) => l.kind)).toEqual(['intent', 'outcome']);
  });
});
