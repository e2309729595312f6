// Findings for UI tests and screenshots: the real reconcile over a fixed registry and fixed OS
// facts, shown through an engine whose snapshot the test sets. The App is the real one.
import { defaultPolicy, reconcile, VERDICTS, type Finding, type HandshakeFacts, type OsFacts, type PidFacts, type PortFacts, type RegistryView, type RemoteHostFacts, type SessionEntry, type Verdict } from '../../src/core/index.js';
import type { WatchEvent } from '../../src/core/events.js';
import type { Leftover } from '../../src/core/leftovers.js';
import type { EndLeftoversRequest, EndLeftoversSummary } from '../../src/engine/end-leftovers.js';
import { departedRow } from '../../src/engine/leftover-rows.js';
import { markStale, withMarks } from '../../src/engine/snapshot.js';
import { checkingOf } from '../../src/engine/types.js';
import type { Engine, EngineFinding, EngineSnapshot, EvictRequest, EvictSummary, HostStatus } from '../../src/engine/types.js';
import type { SourceState } from '../../src/sources/types.js';
import { emptyCounters } from '../../src/sources/types.js';

export const FIXED_NOW = Date.UTC(2026, 10, 22, 9, 30, 0);
export const HOST = 'devbox';
const S = (minutesAgo: number) => FIXED_NOW - minutesAgo * 60_000;
const home = '/home/ana';

export function demoView(): { view: RegistryView; facts: OsFacts } {
  // As the hypivisor adapter builds them: the registry's NodeInfo (seconds) kept as `raw`.
  const e = (id: string, f: Record<string, unknown>) => {
    const entry: Record<string, unknown> = { source: 'hypivisor', id, machine: HOST, status: 'active', ...f };
    const secs = (ms: unknown) => (typeof ms === 'number' ? Math.floor(ms / 1000) : undefined);
    entry.raw = Object.fromEntries(
      Object.entries({
        id,
        machine: entry.machine,
        cwd: entry.cwd,
        port: entry.port,
        status: entry.status,
        pid: entry.pid,
        offline_since: secs(entry.offlineSince),
        last_seen: secs(FIXED_NOW - 20_000),
        registered_at: secs(entry.registeredAt),
      }).filter(([, v]) => v !== undefined),
    );
    return entry as unknown as SessionEntry;
  };
  const sessions = [
    e('7f3a9c1e-live-agent', { pid: 41001, port: 8101, cwd: `${home}/work/ghostwatch`, registeredAt: S(42) }),
    e('b21d44aa-live-agent', { pid: 41002, port: 8102, cwd: `${home}/work/api-server/packages/gateway`, registeredAt: S(125) }),
    e('c0ffee00-ghost', { pid: 40777, port: 8103, cwd: `${home}/work/hyper-pi`, registeredAt: S(300) }),
    e('d15ea5e0-zombie', { pid: 40888, port: 8104, cwd: `${home}/work/infra/terraform`, registeredAt: S(61) }),
    e('e7e7e7e7-reused', { pid: 40999, port: 8105, cwd: `${home}/scratch`, registeredAt: S(900) }),
    e('a0a0a0a0-old-session', { pid: 41010, port: 8106, cwd: `${home}/work/ghostwatch`, registeredAt: S(30) }),
    e('a1a1a1a1-new-session', { pid: 41010, port: 8107, cwd: `${home}/work/ghostwatch`, registeredAt: S(3) }),
    e('pending-41020', { pid: 41020, port: 8108, cwd: `${home}/work/docs`, registeredAt: S(0.5) }),
    e('pending-40555', { pid: 40555, port: 8109, cwd: `${home}/work/docs`, registeredAt: S(25) }),
    e('f00df00d-offline', { pid: 40666, port: 8110, cwd: `${home}/work/old`, status: 'offline', offline: true, offlineSince: S(0.3), registeredAt: S(80) }),
    e('9e9e9e9e-remote', { pid: 5123, port: 8111, cwd: '/home/ana/work/ghostwatch', machine: 'laptop.lan', registeredAt: S(15) }),
    e('8d8d8d8d-unverified', { port: 8112, cwd: `${home}/work/legacy-agent`, registeredAt: S(200) }),
    e('evil\u001b[2J\u001b]0;pwned\u0007', { pid: 40778, port: 8113, cwd: `${home}/work/\u202Eevil`, registeredAt: S(10) }),
  ];
  const claims = [
    { source: 'hypivisor', resource: `${home}/work/ghostwatch`, holder: '7f3a9c1e-live-agent', acquiredAt: S(40) },
    { source: 'hypivisor', resource: `${home}/work/hyper-pi`, holder: 'c0ffee00-ghost', acquiredAt: S(290) },
  ];
  // What each live process costs, as the engine's meter would say after two probes.
  const costs: Record<number, { cpuPct: number; rssMib: number }> = { 41001: { cpuPct: 3.2, rssMib: 212 }, 41002: { cpuPct: 41, rssMib: 388 }, 40888: { cpuPct: 0, rssMib: 0 }, 40999: { cpuPct: 0.4, rssMib: 18 }, 41010: { cpuPct: 0.1, rssMib: 164 }, 41020: { cpuPct: 12, rssMib: 96 } };
  const usage = (pid: number) => (costs[pid] ? { cpuPct: costs[pid].cpuPct, cpuOver: 'interval' as const, rssBytes: costs[pid].rssMib * 1024 * 1024 } : undefined);
  const alive = (pid: number, startedMinutesAgo: number, state = 'S') => [pid, { pid, kill: 'ok' as const, state, startedAt: S(startedMinutesAgo), checkedAt: FIXED_NOW, usage: usage(pid) }] as const;
  const pids = new Map([
    alive(41001, 43),
    alive(41002, 126),
    [40777, { pid: 40777, kill: 'ESRCH' as const, checkedAt: FIXED_NOW }],
    alive(40888, 62, 'Z'),
    alive(40999, 2),
    alive(41010, 31),
    alive(41020, 0.6),
    [40555, { pid: 40555, kill: 'ESRCH' as const, checkedAt: FIXED_NOW }],
    [40778, { pid: 40778, kill: 'ESRCH' as const, checkedAt: FIXED_NOW }],
  ] as [number, PidFacts][]);
  const ports = new Map<number, PortFacts>([[8112, { port: 8112, result: 'timeout', checkedAt: FIXED_NOW }]]);
  return { view: { sessions, claims }, facts: { pids, ports } };
}

export function source(fields: Partial<SourceState> = {}): SourceState {
  return {
    name: 'hypivisor',
    url: 'ws://localhost:31415/ws',
    status: 'connected',
    since: FIXED_NOW - 60_000,
    repaired: 0,
    resyncs: 3,
    reconnects: 0,
    counters: emptyCounters(),
    claims: true,
    clockOffsetMs: 0,
    ...fields,
  };
}

export function snapshotOf(findings: readonly Finding[], fields: Partial<EngineSnapshot> = {}): EngineSnapshot {
  const counts = Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<Verdict, number>;
  for (const f of findings) counts[f.verdict]++;
  return {
    findings,
    sources: [source()],
    host: HOST,
    os: { processTable: 'ok', lastProbeAt: FIXED_NOW },
    counts,
    problems: findings.filter((f) => f.problem).length,
    // As the engine's buildSnapshot counts them.
    checking: findings.filter(checkingOf).length,
    computedAt: FIXED_NOW,
    version: 1,
    settled: true,
    ...fields,
  };
}

export function demoFindings(): Finding[] {
  const { view, facts } = demoView();
  return reconcile(view, facts, FIXED_NOW, defaultPolicy(HOST));
}

/** What the demo's ghost (c0ffee00, pid 40777) left running: a dev server on :3000 and a test watcher at full CPU. */
export function demoLeftovers(): Leftover[] {
  const base = { ppid: 1, state: 'S', uid: 1000, user: 'ana', agentPid: 40777, otherUser: false } as const;
  return [
    { ...base, pid: 40790, startTicks: 9_120_300, startedAt: S(290), name: 'node', cmd: `node ${home}/work/hyper-pi/node_modules/.bin/vite --port 3000`, rssBytes: 88_612_864, cpuPct: 0.3, ports: [3000, 24678] },
    { ...base, pid: 40791, startTicks: 9_120_412, startedAt: S(289), state: 'R', name: 'node', cmd: 'node --test --watch test/', rssBytes: 43_044_864, cpuPct: 98.7, ports: [] },
  ];
}

/** A pi agent gone from the registry (swept after it died) whose browser still runs (`otherUser`: as another user, ghostwatch running as root). */
export function departedLeftovers(otherUser = false): Leftover[] {
  const owner = otherUser ? { uid: 33, user: 'www-data', otherUser: true } : { uid: 1000, user: 'ana', otherUser: false };
  return [{ pid: 40920, ppid: 1, state: 'S', ...owner, agentPid: 40900, startTicks: 9_130_000, startedAt: S(75), name: 'chrome', cmd: '/opt/google/chrome/chrome --headless --remote-debugging-port=9222', rssBytes: 212_860_928, cpuPct: 1.2, ports: [9222] }];
}

/** The demo's rows with leftovers under the ghost, and (unless told not to) a departed agent's row. */
export function leftoverSnapshot(opts: { departed?: boolean; otherUser?: boolean } = {}): { findings: EngineFinding[]; fields: Partial<EngineSnapshot> } {
  const findings: EngineFinding[] = demoFindings().map((f) => (f.id === 'c0ffee00-ghost' ? withMarks(f, { leftovers: demoLeftovers() }) : f));
  const departed = departedRow({ agent: { pid: 40900, startTicks: 9_129_000 }, refs: [{ source: 'hypivisor', id: '5e5e5e5e-swept', machine: HOST, cwd: `${home}/work/e2e` }], leftovers: departedLeftovers(opts.otherUser) }, HOST);
  const os = { processTable: 'ok' as const, lastProbeAt: FIXED_NOW, leftoversTracked: true };
  return { findings, fields: opts.departed === false ? { os } : { departed: [departed], os } };
}

export function leftoverEngine(opts: { departed?: boolean; otherUser?: boolean } = {}): StaticEngine {
  const { findings, fields } = leftoverSnapshot(opts);
  return new StaticEngine(findings, fields);
}

/** An engine whose snapshot the test sets; evictions are recorded, not sent anywhere. */
export class StaticEngine implements Engine {
  private snap: EngineSnapshot;
  private readonly listeners = new Set<() => void>();
  readonly evictions: EvictRequest[] = [];
  refreshes = 0;
  constructor(findings: readonly Finding[] = demoFindings(), fields: Partial<EngineSnapshot> = {}) {
    this.snap = snapshotOf(findings, fields);
  }
  set(findings: readonly Finding[], fields: Partial<EngineSnapshot> = {}): void {
    this.snap = snapshotOf(findings, { version: this.snap.version + 1, ...fields });
    for (const l of this.listeners) l();
  }
  start(): void {}
  async stop(): Promise<void> {}
  getSnapshot = (): EngineSnapshot => this.snap;
  subscribe = (l: () => void): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  async refresh(): Promise<void> {
    this.refreshes++;
  }
  readonly endings: EndLeftoversRequest[] = [];
  async endLeftovers(request: EndLeftoversRequest): Promise<EndLeftoversSummary> {
    this.endings.push(request);
    const results = request.selection.map((target) => ({ target, outcome: 'ended' as const, detail: 'gone after SIGTERM' }));
    return { results, counts: { ended: results.length, killed: 0, 'already-gone': 0, skipped: 0, refused: 0, failed: 0 } };
  }
  async evict(request: EvictRequest): Promise<EvictSummary> {
    this.evictions.push(request);
    const results = request.selection.map((finding) => ({ finding, outcome: 'evicted' as const, forced: request.force }));
    return { results, needsForce: [], counts: { evicted: results.length, 'already-gone': 0, skipped: 0, refused: 0, failed: 0 } };
  }
  processInfo(): undefined {
    return undefined;
  }
  /** What the test says the engine last checked, by row id. */
  readonly checked = new Map<string, number>();
  lastChecked(f: Finding): number | undefined {
    return this.checked.get(f.id);
  }
  async settled(): Promise<EngineSnapshot> {
    return this.snap;
  }
}

/**
 * Several registries at once, as the agentctl and Claude adapters build their entries: the
 * hypivisor demo (a few of its rows), agentctl sessions and locks, Claude Code session files
 * and a claim manager's claims. `agentctlDown`: the daemon is gone and its files are read.
 */
const MACHINE_ID = '3d1219c7c4c5404aaa1f6d2a48adfda4';

export function multiSourceEngine(opts: { agentctlDown: boolean }): StaticEngine {
  const { view, facts } = demoView();
  const keep = new Set(['7f3a9c1e-live-agent', 'c0ffee00-ghost', 'd15ea5e0-zombie', 'pending-40555']);
  const ses = (source: string, id: string, f: Partial<SessionEntry>): SessionEntry => ({ source, id, machine: HOST, ...f, raw: { id, ...f } as Record<string, unknown> });
  const claudeId = '5f0c2d7e-1b2a-4c3d-9e8f-0a1b2c3d4e5f';
  const sessions: SessionEntry[] = [
    ...view.sessions.filter((s) => keep.has(s.id)),
    ses('agentctl', 'ac-3f9e21', { pid: 41001, cwd: `${home}/work/ghostwatch`, status: 'running', registeredAt: S(41) }),
    ses('agentctl', 'ac-77d0b4', { pid: 40321, cwd: `${home}/work/billing`, status: 'running', registeredAt: S(95) }),
    ses('agentctl', 'pending-40322', { pid: 40322, cwd: `${home}/work/billing`, status: 'pending', registeredAt: S(190) }),
    ses('agentctl', 'ac-1c2d3e', { pid: 40323, cwd: `${home}/work/site`, status: 'completed', offline: true, ended: true, registeredAt: S(400) }),
    ses('claude', claudeId, { pid: 41002, sessionId: claudeId, cwd: `${home}/work/api-server`, status: 'busy', registeredAt: S(124) }),
    // The same session resumed in a second pane while the first is still open.
    ses('claude', `${claudeId}~41003.json`, { pid: 41003, sessionId: claudeId, cwd: `${home}/work/api-server`, status: 'idle', registeredAt: S(30) }),
    ses('claude', '0d15ea5e-0000-4000-8000-00000000dead', { pid: 40401, cwd: `${home}/work/notes`, status: 'idle', registeredAt: S(600) }),
    // A session in a container: pid 2 of its own pid namespace, host pid 41004.
    ses('claude', '9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d', { pid: 2, cwd: '/src', status: 'waiting', registeredAt: S(300), pidDomain: { text: `linux:${MACHINE_ID}:pid:[4026532178]`, machineId: MACHINE_ID, namespace: '4026532178' } }),
    ses('claude-sessions', claudeId, { pid: 41002, lastSeen: S(1), registeredAt: S(120) }),
    ses('claude-sessions', 'bbbb0000-0000-4000-8000-00000000000b', { pid: 40402, lastSeen: S(2), registeredAt: S(50) }),
  ];
  const claims = [
    ...view.claims,
    { source: 'agentctl', resource: `${home}/work/billing`, pid: 40321, machine: HOST, acquiredAt: S(95), note: 'auto-lock of session ac-77d0b4' },
    { source: 'agentctl', resource: `${home}/work/api-server`, holder: claudeId, machine: HOST, acquiredAt: S(120), note: 'auto-lock of session ' + claudeId },
    { source: 'agentctl', resource: `${home}/work/release`, machine: HOST, acquiredAt: S(2000), note: 'manual lock by ana: release Friday' },
    { source: 'claude-sessions', resource: 'SD-101', holder: claudeId, pid: 41002, machine: HOST, acquiredAt: S(120), heartbeatAt: S(1), staleAfterMs: 900_000 },
    { source: 'claude-sessions', resource: 'SD-102', holder: 'bbbb0000-0000-4000-8000-00000000000b', pid: 40402, machine: HOST, acquiredAt: S(50), heartbeatAt: S(22), staleAfterMs: 900_000 },
  ];
  const pids = new Map(facts.pids);
  for (const pid of [40321, 40322, 40323, 40401]) pids.set(pid, { pid, kill: 'ESRCH', checkedAt: FIXED_NOW });
  pids.set(40402, { pid: 40402, kill: 'ok', state: 'S', startedAt: S(51), checkedAt: FIXED_NOW });
  for (const [pid, at] of [[41003, 31], [41004, 301]] as const) pids.set(pid, { pid, kill: 'ok', state: 'S', startedAt: S(at), checkedAt: FIXED_NOW });
  const pidNamespaces = { machineId: MACHINE_ID, own: '4026531836', initial: true, namespaces: new Map([['4026532178', new Map([[2, 41004]])]]), checkedAt: FIXED_NOW };
  const findings = reconcile({ sessions, claims }, { pids, ports: facts.ports, pidNamespaces }, FIXED_NOW, defaultPolicy(HOST));
  const prune = "agentctl prunes every dead record at once: session.prune marks every session whose pid is dead stopped and drops every auto-lock whose pid is dead, not only these (agentctl counts another user's process as dead)";
  const sources: SourceState[] = [
    source(),
    opts.agentctlDown
      ? source({ name: 'agentctl', url: `${home}/.agentctl`, status: 'files-only', claims: undefined, lastError: 'daemon down (connect ENOENT /home/ana/.agentctl/agentctl.sock): reading its files', eviction: { available: false, why: 'the agentctl daemon is not running: its state.json and locks.json are read-only to ghostwatch', note: prune } })
      : source({ name: 'agentctl', url: `${home}/.agentctl/agentctl.sock`, status: 'connected', claims: undefined, eviction: { available: true, note: prune } }),
    source({ name: 'claude', url: `${home}/.claude/sessions`, status: 'watching', claims: undefined, warnings: ['41777.json: not valid JSON (Unexpected end of JSON input)'], eviction: { available: true, note: 'claude: the session file and its key files go to the ghostwatch trash (restore puts them back); a dead messaging socket is removed' } }),
    source({ name: 'claude-view', url: `${home}/.claude`, status: 'absent', claims: undefined, lastError: `no live-monitor-pids.json in ${home}/.claude yet (watching for it)`, eviction: { available: false, why: 'claude-view rewrites live-monitor-pids.json itself' } }),
    source({ name: 'claude-sessions', url: `${home}/.claude-sessions`, status: 'watching', claims: undefined, eviction: { available: true, note: 'claude-sessions: eviction moves the whole session file, its claim with it, to the ghostwatch trash' } }),
  ];
  return new StaticEngine(findings, { sources });
}

/**
 * What each agent costs, and the ones that cannot answer: a busy agent, idle ones, one stopped
 * with Ctrl-Z 18 minutes ago (suspended), one held by a debugger (t), one whose event loop hangs
 * (its port let the bound pass twice: "not answering"), a ghost and a remote row (no figures).
 */
export function costsEngine(): StaticEngine {
  const e = (id: string, f: Partial<SessionEntry>): SessionEntry => {
    const entry = { source: 'hypivisor', id, machine: HOST, status: 'active', portProtocol: 'websocket', ...f } as SessionEntry;
    return { ...entry, raw: { id, machine: entry.machine, cwd: f.cwd, port: f.port, pid: f.pid, status: entry.status } as Record<string, unknown> };
  };
  const sessions: SessionEntry[] = [
    e('7f3a9c1e-refactor-parser', { pid: 41001, port: 8101, cwd: `${home}/work/ghostwatch`, registeredAt: S(42) }),
    e('b21d44aa-build-gateway', { pid: 41002, port: 8102, cwd: `${home}/work/api-server/packages/gateway`, registeredAt: S(125) }),
    e('3c3c3c3c-paused-in-pane', { pid: 41030, port: 8103, cwd: `${home}/work/hyper-pi`, registeredAt: S(64) }),
    e('4d4d4d4d-under-gdb', { pid: 41031, port: 8104, cwd: `${home}/work/native-addon`, registeredAt: S(20) }),
    e('5e5e5e5e-hung-loop', { pid: 41032, port: 8105, cwd: `${home}/work/infra/terraform`, registeredAt: S(33) }),
    e('6f6f6f6f-docs-writer', { pid: 41033, port: 8106, cwd: `${home}/work/docs`, registeredAt: S(8) }),
    e('c0ffee00-ghost', { pid: 40777, port: 8107, cwd: `${home}/work/old`, registeredAt: S(300) }),
    e('9e9e9e9e-remote', { pid: 5123, port: 8111, cwd: '/home/ana/work/ghostwatch', machine: 'laptop.lan', registeredAt: S(15) }),
  ];
  const MIB = 1024 * 1024;
  const run = (pid: number, started: number, cpuPct: number, rssMib: number, more: Partial<PidFacts> = {}): [number, PidFacts] => [pid, { pid, kill: 'ok', state: 'S', startedAt: S(started), checkedAt: FIXED_NOW, usage: { cpuPct, cpuOver: 'interval', rssBytes: rssMib * MIB }, ...more }];
  const pids = new Map<number, PidFacts>([
    run(41001, 43, 2.7, 214),
    run(41002, 126, 97, 1_310, { state: 'R' }),
    run(41030, 65, 0, 236, { state: 'T', stoppedSince: S(18) }),
    run(41031, 21, 0, 88, { state: 't', stoppedSince: S(2) }),
    run(41032, 34, 100, 612, { state: 'R' }),
    run(41033, 9, 0.3, 151),
    [40777, { pid: 40777, kill: 'ESRCH', checkedAt: FIXED_NOW }],
  ]);
  const probe = (port: number, fields: Partial<HandshakeFacts>): [number, HandshakeFacts] => [port, { port, result: 'answered', detail: 'HTTP/1.1 400 Bad Request', ms: 2, boundMs: 2_000, misses: 0, checkedAt: FIXED_NOW, ...fields }];
  // Only a port that did not answer is kept.
  const handshakes = new Map<number, HandshakeFacts>([probe(8105, { result: 'timeout', detail: 'no answer within 2000 ms', ms: 2_003, misses: 2 })]);
  const findings = reconcile({ sessions, claims: [] }, { pids, ports: new Map(), handshakes }, FIXED_NOW, defaultPolicy(HOST, { clockText: (ms) => new Date(ms).toISOString().slice(11, 19) }));
  return new StaticEngine(findings);
}

/**
 * The hypivisor demo with its registry not read: `cause` as the client words it, since two
 * minutes ago, the next try in 4 s. `kept`: the rows it had stay, marked stale by the engine's
 * own markStale; without, it never connected and has none.
 */
export function downEngine(opts: { cause: string; status: 'auth-refused' | 'unreachable'; kept: boolean; lastError?: string }): StaticEngine {
  const down = source({
    status: opts.status,
    since: FIXED_NOW - 4_000,
    cause: opts.cause,
    lastError: opts.lastError ?? opts.cause,
    downSince: FIXED_NOW - 124_000,
    retryAt: FIXED_NOW + 3_500,
    ...(opts.kept ? { confirmedAt: FIXED_NOW - 124_000 } : {}),
  });
  const findings = opts.kept ? markStale(demoFindings(), [down]) : [];
  return new StaticEngine(findings, { sources: [down] });
}

/** An engine with a morning's events for the events pane: what users read instead of logs. */
export function eventsEngine(): StaticEngine {
  const at = (minutesAgo: number, seconds = 0) => FIXED_NOW - minutesAgo * 60_000 + seconds * 1_000;
  const row = { source: 'hypivisor', rowKind: 'session' } as const;
  const events: WatchEvent[] = [
    { at: at(95), kind: 'source', source: 'hypivisor', status: 'connected', reading: true, rows: 11 },
    { ...row, at: at(61, 12), kind: 'joined', id: 'd15ea5e0-zombie', verdict: 'live' },
    { ...row, at: at(42, 3), kind: 'joined', id: '7f3a9c1e-live-agent', verdict: 'live' },
    { ...row, at: at(30, 40), kind: 'joined', id: 'a0a0a0a0-old-session', verdict: 'live' },
    { ...row, at: at(30, 41), kind: 'judged', id: 'a0a0a0a0-old-session', verdict: 'superseded', from: 'live', detail: 'pid 41010 is claimed by a newer registration' },
    { at: at(22), kind: 'source', source: 'hypivisor', status: 'unreachable', reading: false, detail: 'connection refused' },
    { at: at(21, 45), kind: 'source', source: 'hypivisor', status: 'connected', reading: true, rows: 12 },
    { ...row, at: at(12, 7), kind: 'offline', id: 'c0ffee00-ghost', verdict: 'ghost' },
    { ...row, at: at(12, 7), kind: 'judged', id: 'c0ffee00-ghost', verdict: 'ghost', from: 'live', detail: 'registry: offline since 09:17:53; OS: pid 40777 is gone (ESRCH)' },
    { ...row, at: at(7, 30), kind: 'judged', id: 'd15ea5e0-zombie', verdict: 'zombie', from: 'live', detail: 'pid 40888 is a zombie (exited, not reaped)' },
    { ...row, at: at(3, 2), kind: 'evicted', id: '0badf00d-ghost', verdict: 'ghost' },
    { ...row, at: at(1, 15), kind: 'left', id: '5eed5eed-agent', verdict: 'live' },
  ];
  return new StaticEngine(demoFindings(), { events });
}

/**
 * This host and three hosts verified over ssh, as the engine would show them: build-42 up (its
 * entries judged on its own facts: live, ghost, zombie), gpu-7 down (sshd refused: unverified with
 * the reason), build-99 answering under another name (unverified, the mismatch said), and a
 * machine nobody configured (remote, as ever). Pids repeat across hosts on purpose: 4242 on
 * build-42 is not 4242 here.
 */
export function fleetEngine(): StaticEngine {
  const { view, facts } = demoView();
  const keep = new Set(['7f3a9c1e-live-agent', 'c0ffee00-ghost', 'a1a1a1a1-new-session', '9e9e9e9e-remote']);
  const remote = (id: string, machine: string, f: Partial<SessionEntry>): SessionEntry => {
    const entry = { source: 'hypivisor', id, machine, status: 'active', ...f } as SessionEntry;
    return { ...entry, raw: { id, machine, cwd: f.cwd, port: f.port, pid: f.pid, status: entry.status } as Record<string, unknown> };
  };
  const sessions: SessionEntry[] = [
    ...view.sessions.filter((s) => keep.has(s.id)),
    remote('b42-release-train', 'build-42', { pid: 4242, port: 9101, cwd: '/srv/ci/release-train', registeredAt: S(55) }),
    remote('b42-nightly', 'build-42', { pid: 4243, port: 9102, cwd: '/srv/ci/nightly', registeredAt: S(180), status: 'offline', offline: true, offlineSince: S(4) }),
    remote('b42-flaky-e2e', 'build-42', { pid: 4250, port: 9103, cwd: '/srv/ci/e2e', registeredAt: S(33) }),
    remote('gpu7-model-eval', 'gpu-7', { pid: 700, port: 9201, cwd: '/data/model-eval', registeredAt: S(240) }),
    remote('gpu7-sweep-lr', 'gpu-7', { pid: 713, port: 9202, cwd: '/data/sweeps/lr', registeredAt: S(90), status: 'offline', offline: true, offlineSince: S(12) }),
    remote('b99-canary', 'build-99', { pid: 4242, port: 9301, cwd: '/srv/ci/canary', registeredAt: S(20) }),
  ];
  const build42 = new Map<number, PidFacts>([
    [4242, { pid: 4242, kill: 'ok', state: 'S', startedAt: S(56), checkedAt: FIXED_NOW }],
    [4243, { pid: 4243, kill: 'ESRCH', checkedAt: FIXED_NOW }],
    [4250, { pid: 4250, kill: 'ok', state: 'Z', startedAt: S(34), checkedAt: FIXED_NOW }],
  ]);
  const remotes: RemoteHostFacts[] = [
    { machine: 'build-42', transport: 'ssh', state: 'up', rttMs: 12, facts: { pids: build42, ports: new Map() } },
    { machine: 'gpu-7', transport: 'ssh', state: 'down', reason: 'connection refused: ssh: connect to host gpu-7 port 22: Connection refused', facts: { pids: new Map(), ports: new Map() } },
    { machine: 'build-99', transport: 'ssh', state: 'down', reason: 'answers as "build-42", not "build-99"', facts: { pids: new Map(), ports: new Map() } },
  ];
  const findings = reconcile({ sessions, claims: view.claims }, { ...facts, remotes }, FIXED_NOW, defaultPolicy(HOST));
  const hosts: HostStatus[] = [
    { machine: 'build-42', dest: 'ci@build-42.internal', transport: 'ssh', state: 'up', rttMs: 12, remoteName: 'build-42', connections: 1 },
    { machine: 'gpu-7', dest: 'gpu-7', transport: 'ssh', state: 'down', kind: 'refused', reason: 'connection refused: ssh: connect to host gpu-7 port 22: Connection refused', connections: 3 },
    { machine: 'build-99', dest: 'build-99', transport: 'ssh', state: 'down', kind: 'mismatch', reason: 'answers as "build-42", not "build-99"', remoteName: 'build-42', connections: 1 },
  ];
  return new StaticEngine(findings, { hosts });
}
