// tmux in the monitor: the PANE column (only while some agent is in a pane, dropped first in a
// narrow pane), the pane in the detail view, `o` asking the engine to switch (and saying why not),
// `c` copying the sanitized id with OSC 52 only to an interactive terminal.
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import type { TmuxPane } from '../../src/core/tmux.js';
import type { Finding } from '../../src/core/types.js';
import type { PaneJumpResult } from '../../src/engine/types.js';
import { App } from '../../src/ui/app.js';
import { layoutColumns, paneKeyOfRow, paneOfRow, recordedPaneId, SESSION_COLUMNS } from '../../src/ui/columns.js';
import { detailLines } from '../../src/ui/detail.js';
import { osc52 } from '../../src/ui/terminal.js';
import { initialViewState, reduce, type ScreenFacts } from '../../src/ui/view-state.js';
import { demoFindings, FIXED_NOW, StaticEngine } from '../support/ui-fixtures.js';
import { firstFrame, typeKeys } from '../support/ink-keys.js';

const WORK: TmuxPane = { pid: 900, target: 'work:2.1', id: '%7' };
const GHOST_PANE: TmuxPane = { pid: 901, target: 'work:3.0', id: '%8' };
const LIVE = 41001; // 7f3a9c1e-live-agent in the demo
const GHOST = 40777; // c0ffee00-ghost
const panes = new Map([
  [LIVE, WORK],
  [GHOST, GHOST_PANE],
]);

class PaneEngine extends StaticEngine {
  readonly jumps: number[] = [];
  answer: PaneJumpResult = { ok: true, text: 'switched to tmux pane work:2.1' };
  async jumpToPane(pid: number): Promise<PaneJumpResult> {
    this.jumps.push(pid);
    return this.answer;
  }
}

async function open(engine: StaticEngine, keys: string[] = [], columns = 140) {
  const r = render(<App engine={engine} now={() => FIXED_NOW} home="/home/ana" size={{ columns, rows: 30 }} onQuit={() => {}} />);
  await firstFrame(r);
  await typeKeys(r, keys);
  return r;
}
const frame = (r: { lastFrame(): string | undefined }) => r.lastFrame() ?? '';
const rowOf = (r: { lastFrame(): string | undefined }, id: string) => frame(r).split('\n').find((l) => l.includes(id)) ?? '';

describe('the PANE column', () => {
  it('shows each agent’s pane, a dead agent’s too, and - for the others', async () => {
    const r = await open(new PaneEngine(demoFindings(), { panes }));
    expect(frame(r)).toMatch(/PID PANE/);
    expect(rowOf(r, '7f3a9c1e-live')).toMatch(/41001 work:2\.1/);
    expect(rowOf(r, 'c0ffee00-ghost')).toMatch(/40777 work:3\.0/);
    expect(rowOf(r, 'd15ea5e0-zombie')).toMatch(/40888 -/);
    r.unmount();
  });
  it('is not there while no agent runs in a tmux pane (no room taken from the others)', async () => {
    const r = await open(new PaneEngine(demoFindings()));
    expect(frame(r)).not.toMatch(/PANE/);
    r.unmount();
  });
  it('is the first column a narrow pane drops', () => {
    const wide = layoutColumns(SESSION_COLUMNS, 140).map((p) => p.column.id);
    expect(wide).toContain('pane');
    const narrower = layoutColumns(SESSION_COLUMNS, 96).map((p) => p.column.id);
    expect(narrower).not.toContain('pane');
    expect(narrower).toContain('source');
  });
  it('never shows a local pane for a remote row with the same pid number', async () => {
    const remote = demoFindings().find((f) => f.id === '9e9e9e9e-remote')!;
    const r = await open(new PaneEngine(demoFindings(), { panes: new Map([...panes, [remote.entry.pid as number, WORK]]) }));
    expect(rowOf(r, '9e9e9e9e-remote')).not.toContain('work:2.1');
    r.unmount();
  });
});

describe('the detail view', () => {
  it('names the pane, and for a dead agent the pane it ran in', () => {
    const [live, ghost] = ['7f3a9c1e-live-agent', 'c0ffee00-ghost'].map((id) => demoFindings().find((f) => f.id === id)!) as [Finding, Finding];
    expect(detailLines(live, FIXED_NOW, undefined, 0, WORK)).toContainEqual({ label: 'tmux pane', value: 'work:2.1 (%7); o goes there' });
    expect(detailLines(ghost, FIXED_NOW, undefined, 0, GHOST_PANE)).toContainEqual({ label: 'tmux pane', value: 'work:3.0 (%8), where it ran; o goes there' });
    expect(detailLines(live, FIXED_NOW).some((l) => l.label === 'tmux pane')).toBe(false);
  });
  it('Enter opens it, with the pane', async () => {
    const r = await open(new PaneEngine(demoFindings(), { panes }), ['/', '7f3a9c1e', '\r', '\r']);
    expect(frame(r)).toMatch(/session:?\s+7f3a9c1e-live-agent/);
    expect(frame(r)).toMatch(/tmux pane\s+work:2\.1 \(%7\); o goes there/);
    r.unmount();
  });
});

describe('o: to the agent’s pane', () => {
  const rows = demoFindings().filter((f) => f.kind === 'session');
  const facts = (p?: ReadonlyMap<number, TmuxPane>): ScreenFacts => ({ rows, all: rows, pageSize: 10, readOnly: false, panes: p });
  const at = (id: string) => ({ ...initialViewState, cursor: rows.findIndex((f) => f.id === id) });

  it.each<[string, string, ReadonlyMap<number, TmuxPane> | undefined, string | number]>([
    ['a live agent in a pane: switch', '7f3a9c1e-live-agent', panes, LIVE],
    ['a ghost whose pane still exists: switch', 'c0ffee00-ghost', panes, GHOST],
    ['no pane known', 'd15ea5e0-zombie', panes, 'no tmux pane known for pid 40888'],
    ['no tmux at all', '7f3a9c1e-live-agent', undefined, 'no tmux pane known for pid 41001'],
    ['a row without a pid', '8d8d8d8d-unverified', panes, 'no tmux pane: this row has no local pid'],
    ['a remote row', '9e9e9e9e-remote', new Map([[5123, WORK]]), 'no tmux pane: pid 5123 runs on another host'],
  ])('%s', (_name, id, p, expected) => {
    const t = reduce(at(id), { type: 'command', command: 'pane.jump' }, facts(p));
    if (typeof expected === 'number') expect(t.effect).toEqual({ type: 'jump', pid: expected });
    else {
      expect(t.effect).toBeUndefined();
      expect(t.state.message?.text).toBe(expected);
    }
  });

  it('in the App: the engine switches, and its one line is shown (a refusal too)', async () => {
    const engine = new PaneEngine(demoFindings(), { panes });
    const r = await open(engine, ['/', '7f3a9c1e', '\r', 'o']);
    expect(engine.jumps).toEqual([LIVE]);
    expect(frame(r)).toContain('switched to tmux pane work:2.1');
    engine.answer = { ok: false, text: 'not inside tmux: attach to it with  tmux attach -t work:3.0' };
    await typeKeys(r, ['/', ...Array<string>(8).fill('\u007f'), 'c0ffee00', '\r', 'o']);
    expect(engine.jumps).toEqual([LIVE, GHOST]);
    expect(frame(r)).toContain('not inside tmux: attach to it with  tmux attach -t work:3.0');
    r.unmount();
  });
});

describe('c: copy the id', () => {
  it('is an effect carrying the sanitized id (a hostile id is copied inert)', () => {
    const rows = demoFindings().filter((f) => f.kind === 'session');
    const evil = rows.findIndex((f) => f.id.startsWith('evil'));
    const t = reduce({ ...initialViewState, cursor: evil }, { type: 'command', command: 'row.copy' }, { rows, all: rows, pageSize: 10, readOnly: false });
    expect(t.effect).toMatchObject({ type: 'copy' });
    const text = (t.effect as { text: string }).text;
    expect(text.startsWith('evil')).toBe(true);
    expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
  });
  it('OSC 52 is the base64 of the text, ended by BEL', () => {
    expect(osc52('c0ffee00-ghost')).toBe(`\u001b]52;c;${Buffer.from('c0ffee00-ghost').toString('base64')}\u0007`);
  });
  it('not to a stdout that is not an interactive terminal: says so and writes no OSC 52', async () => {
    const r = await open(new PaneEngine(demoFindings(), { panes }), ['c']);
    expect(frame(r)).toContain('cannot copy: the output is not an interactive terminal');
    expect(r.frames.join('')).not.toContain('\u001b]52;');
    r.unmount();
  });
});

describe("a record's own pane and a pid namespace's host pid", () => {
  const pane: TmuxPane = { pid: 900, target: 'work:3.0', id: '%12' };
  const claudeRow = (fields: { pid: number; tmux?: string; hostPid?: number }): Finding => {
    const base = demoFindings().find((f) => f.kind === 'session' && f.evidence.host.local)!;
    if (base.kind !== 'session') throw new Error('no session row');
    return {
      ...base,
      entry: { ...base.entry, pid: fields.pid, raw: { pid: fields.pid, ...(fields.tmux ? { tmux: fields.tmux } : {}) } },
      evidence: { ...base.evidence, ...(fields.hostPid !== undefined ? { pidDomain: { domain: 'linux:x:pid:[1]', nsPid: fields.pid, hostPid: fields.hostPid, status: 'mapped' as const } } : {}) },
    };
  };

  it('finds the pane by the host pid of a record of another namespace, never by its own pid there', () => {
    const panes = new Map<number, TmuxPane>([[48213, pane], [2, { pid: 1, target: 'wrong:0.0', id: '%1' }]]);
    expect(paneKeyOfRow(claudeRow({ pid: 2, hostPid: 48213 }), panes)).toBe(48213);
    expect(paneOfRow(claudeRow({ pid: 2, hostPid: 48213 }), panes)).toBe(pane);
  });

  it('falls back to the pane the record names (Claude Code\'s tmux field) when its pid is in none known', () => {
    const panes = new Map<number, TmuxPane>([[777, pane]]);
    expect(paneKeyOfRow(claudeRow({ pid: 4242, tmux: 'work:@3.%12' }), panes)).toBe(777);
    expect(paneKeyOfRow(claudeRow({ pid: 4242, tmux: 'work:@3.%13' }), panes)).toBeUndefined();
    expect(paneKeyOfRow(claudeRow({ pid: 4242 }), panes)).toBeUndefined();
    expect(recordedPaneId('s p:@3.%12')).toBe('%12');
    expect(recordedPaneId('%12;evil')).toBeUndefined();
    expect(recordedPaneId(12)).toBeUndefined();
  });
});
