// The table's rows under a flood (issue 26): a snapshot that changed most rows of a large table
// is sorted after its frame, in slices, and the frame the snapshot draws at once keeps the rows
// it had (with the new header); a small table, and a key that changes the sort, get their rows in
// the frame itself.
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { defaultPolicy, reconcile } from '../../src/core/index.js';
import type { Finding, OsFacts, SessionEntry } from '../../src/core/types.js';
import { App } from '../../src/ui/app.js';
import { firstFrame, typeKeys } from '../support/ink-keys.js';
import { FIXED_NOW, HOST, StaticEngine } from '../support/ui-fixtures.js';
import { until } from '../support/wait.js';

const DEAD = 4_242;
const facts: OsFacts = { pids: new Map([[DEAD, { pid: DEAD, kill: 'ESRCH', checkedAt: FIXED_NOW }]]), ports: new Map() };

/** `n` sessions on other machines (remote, in id order); with `ghost`, that one is this host's on a dead pid. */
function findings(n: number, ghost?: string): Finding[] {
  const sessions = Array.from({ length: n }, (_, i): SessionEntry => {
    const id = `s-${String(i).padStart(5, '0')}`;
    return id === ghost
      ? { source: 'hypivisor', id, machine: HOST, cwd: '/w', port: 20_000 + i, pid: DEAD, status: 'active' }
      : { source: 'hypivisor', id, machine: `node-${i % 5}.example`, cwd: '/w', port: 20_000 + i, pid: 10_000 + i, status: 'active' };
  });
  return reconcile({ sessions, claims: [] }, facts, FIXED_NOW, defaultPolicy(HOST));
}

/** The id on the cursor's row (the first row: the cursor starts there). */
const topRow = (frame: string | undefined) => /^>.*?\b(s-\d{5})\b/m.exec(frame ?? '')?.[1];

/** `n` sessions on other machines, in id order, with one more (`s-00002b`) sorting between s-00002 and s-00003. */
function withNewRow(n: number, extra: boolean): Finding[] {
  const ids = Array.from({ length: n }, (_, i) => `s-${String(i).padStart(5, '0')}`);
  if (extra) ids.splice(3, 0, 's-00002b');
  const sessions = ids.map((id, i): SessionEntry => ({ source: 'hypivisor', id, machine: `node-${i % 5}.example`, cwd: '/w', port: 20_000 + i, pid: 10_000 + i, status: 'active' }));
  return reconcile({ sessions, claims: [] }, facts, FIXED_NOW, defaultPolicy(HOST));
}

describe('the rows of a new snapshot', () => {
  it('a snapshot that changed most rows of a large table: its first frame keeps the rows the table had, the new order follows', async () => {
    // Past rows.ts's SLICED_ROWS (5,000).
    const n = 6_000;
    const engine = new StaticEngine(findings(n));
    const r = render(<App engine={engine} now={() => FIXED_NOW} size={{ columns: 100, rows: 20 }} onQuit={() => {}} />);
    await firstFrame(r);
    expect(topRow(r.lastFrame())).toBe('s-00000');
    const drawn = r.frames.length;
    // Every row judged anew (new objects), one of them now a ghost: problems come first.
    engine.set(findings(n, 's-03000'));
    await until(() => topRow(r.lastFrame()) === 's-03000', 5_000, 'the ghost on top');
    const after = r.frames.slice(drawn);
    // The snapshot's own frame: its header counts the ghost, its rows are the ones before.
    expect(after[0]).toMatch(/1 ghost/);
    expect(topRow(after[0])).toBe('s-00000');
    r.unmount();
  });

  it('a small table gets the new order in the snapshot\'s own frame', async () => {
    const engine = new StaticEngine(findings(50));
    const r = render(<App engine={engine} now={() => FIXED_NOW} size={{ columns: 100, rows: 20 }} onQuit={() => {}} />);
    await firstFrame(r);
    const drawn = r.frames.length;
    engine.set(findings(50, 's-00030'));
    await until(() => r.frames.length > drawn, 2_000, 'a frame');
    expect(topRow(r.frames[drawn])).toBe('s-00030');
    r.unmount();
  });

  // A row that appears above the cursor moves the cursor's row down one. Anchoring the cursor in
  // an effect drew one frame with the cursor on the row that took its place (s-00004), and a key
  // typed then acted on it.
  it.each([50, 6_000])('rows that move under a cursor put there: every frame shows it on its own row (%i rows)', async (n) => {
    const engine = new StaticEngine(withNewRow(n, false));
    const r = render(<App engine={engine} now={() => FIXED_NOW} size={{ columns: 100, rows: 20 }} onQuit={() => {}} />);
    await firstFrame(r);
    await typeKeys(r, ['j', 'j', 'j', 'j', 'j']);
    expect(topRow(r.lastFrame())).toBe('s-00005');
    const drawn = r.frames.length;
    engine.set(withNewRow(n, true));
    await until(() => r.frames.slice(drawn).some((f) => f.includes('s-00002b')), 5_000, 'the new row on screen');
    const after = r.frames.slice(drawn);
    expect(after.map(topRow)).toEqual(after.map(() => 's-00005'));
    r.unmount();
  });
});

