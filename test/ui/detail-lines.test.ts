// The detail view's lines, every kind of evidence a finding can carry, from real reconcile
// findings: what a person reads to decide an eviction must say what the evidence says.
import { describe, expect, it } from 'vitest';
import { defaultPolicy, reconcile, type ClaimEntry, type Finding, type PidFacts, type PortFacts, type SessionEntry } from '../../src/core/index.js';
import { withMarks } from '../../src/engine/snapshot.js';
import fc from 'fast-check';
import { formatDuration } from '../../src/core/duration.js';
import { localClockText } from '../../src/engine/registry-view.js';
import { detailLines } from '../../src/ui/detail.js';
import { clockTime, formatAge, isoTime, momentText } from '../../src/ui/text.js';
import { checkedText } from '../../src/ui/detail.js';

const HOST = 'devbox';
const NOW = 1_800_000_000_000;
const MIN = 60_000;
const proc = (pid: number) => ({ pid, ppid: 1, name: 'pi', cmd: 'node /opt/pi/cli.js --session \u001b]0;x\u0007', startedAt: NOW - 60 * MIN });
const alive = (pid: number, extra: object = {}) => ({ pid, kill: 'ok' as const, state: 'S', startedAt: NOW - 60 * MIN, checkedAt: NOW - 200, process: proc(pid), ...extra });

function findings(): Finding[] {
  const sessions: SessionEntry[] = [
    { source: 'hypivisor', id: 'served', machine: HOST, port: 8080, registeredAt: NOW - 10 * MIN, raw: { id: 'served', registered_at: (NOW - 10 * MIN) / 1000, started: '2026-11-23T10:00:00Z', meta: { nested: [1, { deep: true }] }, raw: 'skipped' } },
    { source: 'hypivisor', id: 'hidden-owner', machine: HOST, port: 8081 },
    { source: 'hypivisor', id: 'old', machine: HOST, pid: 4242, registeredAt: NOW - 20 * MIN },
    { source: 'hypivisor', id: 'new', machine: HOST, pid: 4242, registeredAt: NOW - 5 * MIN },
    { source: 'hypivisor', id: 'pending-9', machine: HOST, pid: 4243, registeredAt: NOW - 30 * MIN },
    { source: 'hypivisor', id: 'gone', machine: HOST, pid: 4244, offline: true, status: 'offline', offlineSince: NOW - 30_000 },
    { source: 'hypivisor', id: 'zed', machine: HOST, pid: 4245 },
    { source: 'hypivisor', id: 'recycled', machine: HOST, pid: 4246, registeredAt: NOW - 10 * MIN },
    { source: 'claude', id: 'iso', machine: HOST, pid: 'x', raw: { claimed_at: new Date(NOW - 5 * MIN).toISOString(), bad_at: '2026-13-45T99:99:99Z', other_at: 'soon' } },
    { source: 'hypivisor', id: 'theirs', machine: HOST, pid: 4247 },
    { source: 'hypivisor', id: 'odd', machine: HOST, pid: 4248 },
  ];
  const claims: ClaimEntry[] = [{ source: 'claude-sessions', resource: 'SD-7', holder: 'nobody-here', heartbeatAt: NOW - 20 * MIN, staleAfterMs: 15 * MIN, note: 'terminal \u202eT1' }];
  const pids = new Map<number, PidFacts>([
    [4242, alive(4242)],
    [4243, alive(4243)],
    [4244, { pid: 4244, kill: 'ESRCH' as const, checkedAt: NOW - 100 }],
    [4245, alive(4245, { state: 'Z' })],
    [4246, alive(4246, { startedAt: NOW - 2 * MIN })],
    [5000, alive(5000)],
    [4247, { pid: 4247, kill: 'EPERM' as const, checkedAt: NOW }],
    [4248, { pid: 4248, kill: 'error' as const, error: 'EINVAL', checkedAt: NOW }],
  ]);
  const ports = new Map<number, PortFacts>([
    [8080, { port: 8080, result: 'open' as const, detail: '127.0.0.1', checkedAt: NOW - 300, owners: [5000], listeners: ['0.0.0.0', '::'] }],
    [8081, { port: 8081, result: 'open' as const, detail: '127.0.0.1', checkedAt: NOW - 300, ownerUnknown: 'unknown — 3 processes not readable', listeners: ['127.0.0.1'] }],
  ]);
  return reconcile({ sessions, claims }, { pids, ports }, NOW, defaultPolicy(HOST, { clockText: () => '12:00:00' }));
}

const lines = (id: string) => {
  const f = findings().find((x) => x.id === id)!;
  return Object.fromEntries(detailLines(f, NOW).map((l) => [l.label, l.value]));
};

describe('the detail view says what the evidence says', () => {
  it('a pid-less entry served by a known process: the port, its listeners, the owner, its process', () => {
    const l = lines('served');
    expect(l['port probe']).toBe('8080: open (127.0.0.1)');
    expect(l['listening on']).toBe('0.0.0.0, ::');
    expect(l['served by']).toBe('pid 5000 (the entry is judged by it)');
    expect(l.pid).toBe('5000 (parent 1)');
    expect(l.name).toBe('pi');
    expect(l.command).not.toContain('\u001b');
    expect(l.started).toBe(new Date(NOW - 60 * MIN).toISOString().replace('.000Z', 'Z'));
    expect(l.checked).toBe('0.2 s ago'); // the owner's facts, read after the port's
  });

  it('raw moments as local time and age, nested values flat, the raw key itself left out', () => {
    const l = lines('served');
    expect(l.registered_at).toMatch(/\(10m00s ago\)$/);
    expect(l.started).toBeDefined();
    expect(l.meta).toBe('{"nested":[1,{"deep":true}]}');
    expect(Object.keys(l)).not.toContain('raw');
  });

  it('an owner that could not be read says why', () => {
    expect(lines('hidden-owner')['served by']).toBe('unknown: unknown — 3 processes not readable');
  });

  it('a superseded entry names its sibling and what decided', () => {
    expect(lines('old')['same pid']).toBe('new; newest by registered at');
  });

  it('a pending placeholder shows its age, where from, and the TTL', () => {
    expect(lines('pending-9')['pending age']).toBe('30m00s from registered at (TTL 2m00s)');
  });

  it('offline and dead: what the registry says and what the OS says', () => {
    const l = lines('gone');
    expect(l['kill(pid, 0)']).toBe('ESRCH: no such process');
    expect(l['registry says']).toMatch(/^offline, offline since /);
    expect(l['locally it is']).toBe('ghost');
  });

  it('a zombie and a recycled pid', () => {
    expect(lines('zed').state).toBe('Z (zombie: exited, not reaped)');
    expect(lines('recycled')['process started']).toMatch(/8m00s after registered at .* \(tolerance 2s\)$/);
  });

  it('ISO moments, unusable pids, EPERM and a failed probe', () => {
    const l = lines('iso');
    expect(l.claimed_at).toMatch(/\(5m00s ago\)$/);
    // Shaped as a moment and none: said so, not shown as a time (nor as if it were one).
    expect(l.bad_at).toBe('invalid time (2026-13-45T99:99:99Z)');
    expect(l.other_at).toBe('soon');
    expect(l.pid).toBe('x: not used (pid is a string, not a number)');
    expect(lines('theirs')['kill(pid, 0)']).toBe('EPERM: exists, another user owns it');
    expect(lines('odd')['kill(pid, 0)']).toBe('error: EINVAL');
  });

  it('a claim: its holder, its note made inert, its heartbeat', () => {
    const l = lines('SD-7');
    expect(l.holder).toBe('nobody-here: not in the registry');
    expect(l.note).not.toContain('\u202e');
    expect(l.heartbeat).toBe('20m00s ago (stale after 15m00s)');
  });
});

describe('the detail view of a stopped agent: since when, what it costs, whether its port answers', () => {
  const f = reconcile(
    { sessions: [{ source: 'hypivisor', id: 'paused', machine: HOST, pid: 4300, port: 8300 }], claims: [] },
    {
      pids: new Map([[4300, alive(4300, { state: 'T', stoppedSince: NOW - 3 * MIN, usage: { cpuPct: 0, cpuOver: 'interval', rssBytes: 123 * 1024 * 1024 } })]]),
      ports: new Map(),
      handshakes: new Map([[8300, { port: 8300, result: 'timeout' as const, detail: 'no answer within 2000 ms', ms: 2004, boundMs: 2000, misses: 2, checkedAt: NOW - 1000 }]]),
    },
    NOW,
    defaultPolicy(HOST, { clockText: () => '11:57:00' }),
  )[0]!;

  it('says it is suspended, since when, the way out, and what it costs', () => {
    const l = Object.fromEntries(detailLines(f, NOW).map((x) => [x.label, x.value]));
    expect(l.verdict).toBe('suspended, evictable only with force');
    expect(l.why).toBe('pid 4300 is stopped (state T, Ctrl-Z or SIGSTOP) since 11:57:00: it cannot answer until continued; o jumps to its pane: fg there, or kill -CONT 4300');
    expect(l['stopped since']).toBe(`${momentText(NOW - 3 * MIN, NOW)}: the first probe that found it stopped`);
    expect(l.CPU).toBe('0.0 % of one core, between the last two probes');
    expect(l.memory).toBe('123M resident (128,974,848 bytes)');
    expect(l['port answers']).toBe('port 8300: no answer to an upgrade request within 2s, 2 times in a row');
  });

  it('an answering port, a first reading over the process\'s life, a port that could not be asked', () => {
    const with_ = (usage: PidFacts['usage'], h: Partial<NonNullable<Finding['evidence']['handshake']>>) =>
      Object.fromEntries(detailLines({ ...f, evidence: { ...f.evidence, usage, handshake: { ...f.evidence.handshake!, ...h } } }, NOW).map((x) => [x.label, x.value]));
    const answered = with_({ cpuPct: 2.5, cpuOver: 'life' }, { result: 'answered', detail: 'HTTP/1.1 400 Bad Request', ms: 3, misses: 0 });
    expect(answered.CPU).toBe('2.5 % of one core, on average since it started (one reading so far)');
    expect(answered.memory).toBeUndefined();
    expect(answered['port answers']).toBe('port 8300: answered an upgrade request in 3ms (HTTP/1.1 400 Bad Request)');
    expect(with_(undefined, { result: 'closed', misses: 1 })['port answers']).toBe('port 8300: closed without answering an upgrade request');
    expect(with_(undefined, { result: 'error', detail: '127.0.0.1 and ::1 refused\u001b[2J' })['port answers']).toBe('port 8300: could not be asked (127.0.0.1 and ::1 refused^[[2J)');
  });
});

describe('the detail view of a Claude Code record', () => {
  const MACHINE = 'a'.repeat(32);
  const started = NOW - 10 * MIN;
  const raw = { pid: 2, sessionId: 'cc', startedAt: started, updatedAt: NOW - MIN, statusUpdatedAt: NOW - MIN, kind: 'interactive', entrypoint: 'cli', version: '2.1.332', name: 'p2-e2', status: 'idle', pidDomain: `linux:${MACHINE}:pid:[4026532999]` };
  const entry = (id: string, pid: number, sessionId: string): SessionEntry => ({
    source: 'claude', id, machine: HOST, pid, sessionId, status: 'idle', registeredAt: started, pidStartTicks: 500,
    pidDomain: { text: raw.pidDomain, machineId: MACHINE, namespace: '4026532999' }, raw: { ...raw, pid },
  });
  const judged = () =>
    reconcile(
      { sessions: [entry('cc', 2, 'S'), entry('cc~3.json', 3, 'S')], claims: [] },
      {
        pids: new Map([[48213, alive(48213, { startTicks: 500 })], [48214, alive(48214, { startTicks: 500 })]]),
        ports: new Map(),
        pidNamespaces: { machineId: MACHINE, own: '4026531836', initial: true, namespaces: new Map([['4026532999', new Map([[2, 48213], [3, 48214]])]]), checkedAt: NOW },
      },
      NOW,
      defaultPolicy(HOST, { clockText: () => '12:00:00' }),
    );

  it('says which namespace the pid is in and which host pid it is, the exact start, the other process, and shows its moments as times', () => {
    const l = Object.fromEntries(detailLines(judged()[0]!, NOW).map((x) => [x.label, x.value]));
    expect(l['pid domain']).toBe(`linux:${MACHINE}:pid:[4026532999]: another pid namespace of this machine; pid 2 there is pid 48213 here`);
    expect(l['exact start']).toBe('tick 500 after boot; the record says 500: the same process');
    expect(l['also open in']).toBe('pid 48214: the same session id in another live process');
    expect(l.verdict).toBe('live (also open in pid 48214), evictable only with force');
    for (const k of ['kind', 'entrypoint', 'version']) expect(l[k]).toBe(String(raw[k as keyof typeof raw]));
    expect(detailLines(judged()[0]!, NOW).some((x) => x.label === 'name' && x.value === 'p2-e2')).toBe(true);
    expect(l.updatedAt).toMatch(/ago/);
    expect(l.startedAt).toMatch(/\(10m00s ago\)$/);
    expect(l.updatedAt).toMatch(/\(1m00s ago\)$/);
  });
});

describe('times that are none', () => {
  it('every time formatter answers any number, never throws: "invalid time" for what a Date cannot hold', () => {
    const any = fc.oneof(fc.double(), fc.constantFrom(1e300, -1e300, 8.64e15 + 1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY));
    fc.assert(
      fc.property(any, any, (ms, now) => {
        for (const text of [isoTime(ms), clockTime(ms, now), momentText(ms, now), localClockText(ms), formatAge(ms), formatDuration(ms), checkedText(ms, now)]) {
          expect(typeof text).toBe('string');
        }
      }),
    );
    expect([isoTime(1e300), clockTime(1e300, NOW), momentText(Number.NaN, NOW), localClockText(Number.POSITIVE_INFINITY)]).toEqual(['invalid time', 'invalid time', 'invalid time', 'invalid time']);
  });

  it('a finding whose evidence holds a time a Date cannot hold (1e300) is drawn, the time as "invalid time"', () => {
    const entry: SessionEntry = { source: 'hypivisor', id: 'far', machine: HOST, pid: 4242, pidStartedAt: 1e300, raw: { id: 'far', pid_started_at: 1e300, last_seen: 1e300, nameSince: Number.POSITIVE_INFINITY } };
    const f: Finding = {
      kind: 'session',
      source: 'hypivisor',
      id: 'far',
      verdict: 'unverified',
      problem: false,
      evictable: false,
      reason: 'r',
      evidence: { host: { machine: HOST, local: true, matchedAs: 'exact' }, kill: 'ok', start: { processStartedAt: NOW, reference: 'pid_started_at', referenceAt: 1e300, deltaMs: NOW - 1e300, toleranceMs: 2000 }, checkedAt: Number.NaN },
      entry,
    };
    const l = Object.fromEntries(detailLines(f, NOW, { pid: 4242, ppid: 1, name: 'pi', cmd: 'pi', startedAt: -1e300 }).map((x) => [x.label, x.value]));
    expect(l.pid_started_at).toBe('invalid time (1e+300)');
    expect(l.last_seen).toBe('invalid time (1e+300)');
    expect(l.nameSince).toBe('invalid time (Infinity)');
    expect(l['process started']).toMatch(/before pid started.at invalid time \(tolerance/);
    expect(l.started).toBe('invalid time');
  });
});

describe('dead since: when the process ended, or the bound on it', () => {
  const ghost = (offlineSince?: number): Finding =>
    reconcile(
      { sessions: [{ source: 'hypivisor', id: 'g', machine: HOST, pid: 4244, registeredAt: NOW - 30 * MIN, ...(offlineSince !== undefined ? { offline: true, status: 'offline', offlineSince } : {}) }], claims: [] },
      { pids: new Map([[4244, { pid: 4244, kill: 'ESRCH' as const, checkedAt: NOW - 3_000 }]]), ports: new Map() },
      NOW,
      defaultPolicy(HOST),
    )[0]!;
  const deadSince = (f: Finding, offsetMs = 0) => detailLines(f, NOW, undefined, offsetMs).find((l) => l.label === 'dead since')?.value;

  it('seen dying: the first probe that found it gone; gone at the first look: "at least", from the registry when it says earlier, its clock offset taken off', () => {
    expect(deadSince(withMarks(ghost(), { deadSince: NOW - 125_000 }))).toMatch(/^\d\d:\d\d:\d\d \(2m05s ago\): the first probe that found its process gone$/);
    expect(deadSince(withMarks(ghost(), { deadSince: NOW - 3_000, goneAtFirstProbe: true }))).toMatch(/^at least 3s: already gone at this monitor's first probe, \d\d:\d\d:\d\d \(3s ago\)$/);
    // The registry's clock runs 2 s ahead of ours: its offline_since 6m24s "ago" by its clock is 6m22s ago by ours.
    expect(deadSince(withMarks(ghost(NOW + 2_000 - 382_000), { deadSince: NOW - 3_000, goneAtFirstProbe: true }), 2_000)).toMatch(
      /^at least 6m22s: the registry has had it offline since \d\d:\d\d:\d\d \(6m22s ago\); already gone at this monitor's first probe, \d\d:\d\d:\d\d \(3s ago\)$/,
    );
    // Offline since after our first probe (it reconnected and dropped again): our first look stands.
    expect(deadSince(withMarks(ghost(NOW - 1_000), { deadSince: NOW - 3_000, goneAtFirstProbe: true }))).toMatch(/^at least 3s: already gone/);
  });
});
