// Numbers that do not lie (issue 27), in the real App: AGE is the floor of the true age and is
// redrawn when its text changes, with no key pressed; a ghost first seen gone here says "≥" and
// takes the registry's offline_since when earlier; a status-line message expires and never hides
// "not connected" or the problem count; nothing is counted before its evidence exists; the header
// of a registry not read says "not connected since" first and gives no problem count; a stale
// row still shows the registry's status.
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { defaultPolicy, reconcile, type Finding, type PidFacts, type SessionEntry } from '../../src/core/index.js';
import { markStale, withMarks } from '../../src/engine/snapshot.js';
import { App } from '../../src/ui/app.js';
import { demoFindings, downEngine, FIXED_NOW, HOST, source, StaticEngine } from '../support/ui-fixtures.js';
import { firstFrame, nextFrame, typeKeys } from '../support/ink-keys.js';
import { until } from '../support/wait.js';
import { inTimeZone } from '../support/time-zone.js';

inTimeZone('UTC');

interface Agent {
  readonly id: string;
  /** How long ago it registered, ms. */
  readonly age: number;
  /** Its process: alive (the default), gone, or not probed yet. */
  readonly process?: 'alive' | 'gone' | 'unprobed';
  /** The registry says offline since this long ago, ms. */
  readonly offlineAgo?: number;
}

/** Sessions of one hypivisor as the real reconcile judges them at `now`, each with its own pid. */
function judged(now: number, agents: readonly Agent[]): Finding[] {
  const sessions: SessionEntry[] = [];
  const pids = new Map<number, PidFacts>();
  agents.forEach((a, i) => {
    const pid = 42_000 + i;
    const offline = a.offlineAgo !== undefined;
    const entry = { source: 'hypivisor', id: a.id, machine: HOST, cwd: `/work/${a.id}`, port: 9000 + i, pid, status: offline ? 'offline' : 'active', offline, registeredAt: now - a.age, ...(offline ? { offlineSince: now - a.offlineAgo! } : {}) };
    sessions.push({ ...entry, raw: { ...entry } } as SessionEntry);
    if (a.process === 'gone') pids.set(pid, { pid, kill: 'ESRCH', checkedAt: now });
    else if (a.process !== 'unprobed') pids.set(pid, { pid, kill: 'ok', state: 'S', startedAt: now - a.age - 1_000, checkedAt: now });
  });
  return reconcile({ sessions, claims: [] }, { pids, ports: new Map() }, now, defaultPolicy(HOST));
}

function open(engine: StaticEngine, now: () => number, size = { columns: 100, rows: 24 }) {
  return render(<App engine={engine} now={now} home="/home/ana" size={size} onQuit={() => {}} />);
}

const lines = (r: { lastFrame(): string | undefined }): string[] => (r.lastFrame() ?? '').split('\n');
/** The AGE cell of a row: right-aligned under the title's AGE, wherever the width puts that column. */
const ageOf = (r: { lastFrame(): string | undefined }, id: string): string | undefined => {
  const all = lines(r);
  const title = all.find((l) => / AGE /.test(l));
  const row = all.find((l) => l.includes(id));
  if (title === undefined || row === undefined) return undefined;
  const end = title.indexOf(' AGE ') + 4;
  return /(\S+)$/.exec(row.slice(0, end))?.[1];
};
const statusLine = (r: { lastFrame(): string | undefined }): string => lines(r).at(-2) ?? '';

describe('AGE', () => {
  it('is the floor of the true age: 88 s is 1m and 5m16s is 5m, whatever the wall clock minute (was <1m and 4m)', async () => {
    // 50 s into a wall-clock minute: a clock floored to the minute lost 50 s of every age.
    const now = FIXED_NOW + 50_000;
    const engine = new StaticEngine(judged(now, [{ id: 'agent-88s', age: 88_000 }, { id: 'agent-316s', age: 316_000 }, { id: 'agent-59s', age: 59_000 }]));
    const r = open(engine, () => now);
    await firstFrame(r);
    expect([ageOf(r, 'agent-88s'), ageOf(r, 'agent-316s'), ageOf(r, 'agent-59s')]).toEqual(['1m', '5m', '<1m']);
    r.unmount();
  });

  it('is redrawn at the moment its text changes, with no key pressed', async () => {
    // Now is 10 s into a minute: the next minute boundary of the wall clock is 50 s away.
    const offset = FIXED_NOW + 10_000 - Date.now();
    const now = () => Date.now() + offset;
    const engine = new StaticEngine(judged(now(), [{ id: 'agent-young', age: 59_200 }, { id: 'agent-old', age: 3_600_000 + 30_000 }]));
    const r = open(engine, now);
    await firstFrame(r);
    expect(ageOf(r, 'agent-young')).toBe('<1m');
    expect(ageOf(r, 'agent-old')).toBe('1h');
    await until(() => ageOf(r, 'agent-young') === '1m', 10_000, () => `agent-young's AGE to read 1m; it reads ${ageOf(r, 'agent-young')}`);
    expect(ageOf(r, 'agent-old')).toBe('1h');
    r.unmount();
  });

  it('of a ghost already gone at the first probe is a lower bound, "≥", from the registry\'s offline_since when earlier; one seen dying is exact', async () => {
    const now = FIXED_NOW + 30_000;
    const [popup, noBound, watched] = judged(now, [
      { id: 'ghost-popup', age: 900_000, process: 'gone', offlineAgo: 382_000 },
      { id: 'ghost-nobound', age: 900_000, process: 'gone' },
      { id: 'ghost-watched', age: 900_000, process: 'gone' },
    ]);
    // As the engine marks them: the first probe (3 s ago) found the first two already gone; the third was seen alive, then gone 125 s ago.
    const findings = [withMarks(popup!, { deadSince: now - 3_000, goneAtFirstProbe: true }), withMarks(noBound!, { deadSince: now - 3_000, goneAtFirstProbe: true }), withMarks(watched!, { deadSince: now - 125_000 })];
    const r = open(new StaticEngine(findings), () => now, { columns: 120, rows: 24 });
    await firstFrame(r);
    expect([ageOf(r, 'ghost-popup'), ageOf(r, 'ghost-nobound'), ageOf(r, 'ghost-watched')]).toEqual(['≥6m', '≥0m', '2m']);
    // The detail view says what the bound rests on.
    const detail = await typeKeys(r, ['j', '\r']);
    expect(detail).toMatch(/session: ghost-popup/);
    const flat = detail.replace(/\n {19}/g, ' ');
    expect(flat).toMatch(/dead since +at least 6m22s: the registry has had it offline since 09:24:08 \(6m22s ago\); already gone at this monitor's first probe, 09:30:27 \(3s ago\)/);
    r.unmount();
  });
});

describe('the status line', () => {
  it('a message never hides a registry going down, and expires (was: "refreshed" until a key)', async () => {
    const engine = new StaticEngine();
    const r = open(engine, () => FIXED_NOW, { columns: 120, rows: 30 });
    await firstFrame(r);
    const before = r.lastFrame();
    r.stdin.write('R');
    await until(() => /^refreshed/.test(statusLine(r)), 3_000, 'the refreshed message');
    expect(statusLine(r)).toMatch(/^refreshed +\| {2}7 problems$/);
    expect(before).toBeDefined();
    // The registry goes down with the message still up: it shows at once, beside the message.
    const down = source({ status: 'unreachable', cause: 'connection refused', lastError: 'connection refused', downSince: FIXED_NOW, since: FIXED_NOW });
    engine.set(markStale(demoFindings(), [down]), { sources: [down] });
    await until(() => /hypivisor not connected/.test(statusLine(r)), 3_000, () => `"hypivisor not connected" on the status line: ${statusLine(r)}`);
    expect(statusLine(r)).toMatch(/^refreshed +\| {2}hypivisor not connected/);
    // A few seconds later the message is gone and the whole state shows.
    await until(() => !/refreshed/.test(statusLine(r)), 10_000, () => `the message to expire: ${statusLine(r)}`);
    expect(statusLine(r)).toMatch(/^hypivisor not connected: connection refused; its 15 rows are the last known/);
    r.unmount();
  });

  it('says "checking…", not "0 problems", while every row waits for its first probe; the header counts the same', async () => {
    const now = FIXED_NOW;
    const agents = Array.from({ length: 12 }, (_, i) => ({ id: `agent-${i}`, age: 30_000, process: 'unprobed' as const }));
    const findings = judged(now, agents).map((f) => withMarks(f, { checking: true }));
    const r = open(new StaticEngine(findings), () => now);
    await firstFrame(r);
    expect(statusLine(r)).toMatch(/^12 sessions {2}\| {2}12 checking…/);
    expect(lines(r)[0]).toMatch(/12 checking…/);
    expect(`${lines(r)[0]}\n${statusLine(r)}`).not.toMatch(/\bproblems?\b|unverified/);
    expect(r.lastFrame()).not.toMatch(/unverified/);
    r.unmount();
  });

  it('a problem found while others still check: "1 problem, 2 checking…"', async () => {
    const now = FIXED_NOW;
    const findings = judged(now, [
      { id: 'agent-ghost', age: 30_000, process: 'gone' },
      { id: 'agent-a', age: 30_000, process: 'unprobed' },
      { id: 'agent-b', age: 30_000, process: 'unprobed' },
    ]).map((f) => (f.verdict === 'unverified' ? withMarks(f, { checking: true }) : f));
    const r = open(new StaticEngine(findings), () => now);
    await firstFrame(r);
    expect(statusLine(r)).toMatch(/^3 sessions {2}\| {2}1 problem, 2 checking…/);
    r.unmount();
  });
});

describe('a registry not read', () => {
  it.each([
    { columns: 80, rows: 24 },
    { columns: 60, rows: 15 },
    { columns: 200, rows: 50 },
  ])('the header says "not connected since HH:MM" first and no problem count (%o)', async (size) => {
    for (const kept of [true, false]) {
      const r = open(downEngine({ cause: 'connection refused', status: 'unreachable', kept }), () => FIXED_NOW, size);
      const frame = await firstFrame(r);
      const header = frame.split('\n')[0]!;
      // Where it fits whole, the address and then the state; cut to fit, the state and why before the address.
      if (size.columns >= 200) expect(header).toMatch(/^ghostwatch {2}hypivisor ws:\/\/localhost:31415\/ws: not connected since 09:27 \(connection refused\)/);
      else expect(header).toMatch(/^ghostwatch {2}hypivisor: not connected since 09:27 \(conn/);
      expect(header).not.toMatch(/\d+ (problems?|ghost|live)\b/);
      r.unmount();
    }
  });

  it("a stale row's STATUS shows the registry's own status first (was: stale <1m…)", async () => {
    const r = open(downEngine({ cause: 'connection refused', status: 'unreachable', kept: true }), () => FIXED_NOW, { columns: 120, rows: 30 });
    await firstFrame(r);
    const offline = lines(r).find((l) => l.includes('f00df00d-offline'));
    const active = lines(r).find((l) => l.includes('7f3a9c1e-live-agent'));
    // The registry's own status first, whether the width leaves the rest whole or cut.
    expect(offline).toMatch(/ offline, (stale 2m|…)$/);
    expect(active).toMatch(/ active, (stale 2m|s…)$/);
    r.unmount();
  });
});

describe('the detail view', () => {
  it('follows the current snapshot: a new last_seen of the registry shows', async () => {
    const engine = new StaticEngine();
    const r = open(engine, () => FIXED_NOW, { columns: 120, rows: 40 });
    await firstFrame(r);
    await typeKeys(r, ['\r']);
    expect(r.lastFrame()).toMatch(/last_seen +09:29:40 \(20s ago\)/);
    const before = r.lastFrame();
    const moved = demoFindings().map((f) => (f.kind === 'session' ? { ...f, entry: { ...f.entry, raw: { ...f.entry.raw, last_seen: Math.floor(FIXED_NOW / 1000) - 2 } } } : f));
    engine.set(moved);
    await nextFrame(r, before);
    expect(r.lastFrame()).toMatch(/last_seen +09:29:58 \(2s ago\)/);
    r.unmount();
  });
});
