// Several registries in the real App: one state line each when the pane has room, folded into
// the first line when it does not, and a confirm dialog that says what eviction does in each.
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { App } from '../../src/ui/app.js';
import { FIXED_NOW, multiSourceEngine } from '../support/ui-fixtures.js';
import { firstFrame, typeKeys } from '../support/ink-keys.js';


async function frame(opts: { agentctlDown: boolean; columns: number; rows: number; keys?: string[]; absent?: { name: string; where: string }[] }): Promise<string[]> {
  const r = render(
    <App engine={multiSourceEngine(opts)} now={() => FIXED_NOW} home="/home/ana" size={{ columns: opts.columns, rows: opts.rows }} onQuit={() => {}} absent={opts.absent} />,
  );
  await firstFrame(r);
  await typeKeys(r, opts.keys ?? []);
  const lines = (r.lastFrame() ?? '').split('\n');
  r.unmount();
  return lines;
}

describe('several sources in the monitor', () => {
  it('one state line per source under the title line, and the frame still fits the pane', async () => {
    const lines = await frame({ agentctlDown: true, columns: 120, rows: 34 });
    expect(lines[0]).toMatch(/^ghostwatch  devbox  \d+ ghost/);
    expect(lines.slice(1, 6).map((l) => l.trim().split(/\s{2,}/).slice(0, 2))).toEqual([
      ['hypivisor', 'connected'],
      ['agentctl', 'files only /home/ana/.agentctl'],
      ['claude', 'watching'],
      ['claude-view', 'absent'],
      ['claude-sessions', 'watching'],
    ]);
    expect(lines[2]).toMatch(/daemon down/);
    expect(lines[3]).toMatch(/41777\.json: not valid JSON/);
    expect(lines[6]).toMatch(/VERDICT.*SOURCE/);
    expect(lines.length).toBeLessThanOrEqual(34);
  });

  it('in a short pane the states fold into the first line', async () => {
    const lines = await frame({ agentctlDown: true, columns: 60, rows: 15 });
    // The sources in trouble first; the count stays whole.
    expect(lines[0]).toMatch(/^ghostwatch  agentctl files only  claude-view abs.* 9 problems$/);
    expect(lines.length).toBeLessThanOrEqual(15);
  });

  it('the confirm dialog names what agentctl and the file sources do on eviction', async () => {
    const text = (await frame({ agentctlDown: false, columns: 200, rows: 40, keys: ['X'] })).join('\n');
    expect(text).toMatch(/Note: agentctl prunes every dead record at once/);
    expect(text).toMatch(/Note: claude: the session file and its key files go to the ghostwatch trash/);
    const down = (await frame({ agentctlDown: true, columns: 200, rows: 40, keys: ['X'] })).join('\n');
    expect(down).toMatch(/Note: agentctl cannot evict now: the agentctl daemon is not running/);
  });

  it('a claim whose holder lives in another source says so in its details', async () => {
    const lines = await frame({ agentctlDown: false, columns: 140, rows: 40, keys: ['\t', '/', 'api-server', '\r', '\r'] });
    expect(lines.join('\n')).toMatch(/holder\s+5f0c2d7e-1b2a-4c3d-9e8f-0a1b2c3d4e5f in claude \(same id\): live/);
  });

  it('with no registry named, the ones not here share one line, with where each was looked for', async () => {
    const absent = [{ name: 'agentctl:other', where: '/home/ana/.other/agentctl.sock' }];
    const lines = await frame({ agentctlDown: false, columns: 160, rows: 34, absent });
    expect(lines.slice(1, 5).map((l) => l.trim().split(/\s{2,}/)[0])).toEqual(['hypivisor', 'agentctl', 'claude', 'claude-sessions']);
    expect(lines[5]!.trimEnd()).toBe('  looked for, not here: claude-view (/home/ana/.claude), agentctl:other (/home/ana/.other/agentctl.sock)');
    expect(lines[6]).toMatch(/VERDICT.*SOURCE/);
    // A short pane: the names only, on the first line.
    const short = await frame({ agentctlDown: false, columns: 160, rows: 15, absent });
    expect(short[0]).toMatch(/claude-sessions watching  not here: claude-view, agentctl:other  devbox/);
  });

  it("the detail view names the row's source with where it reads (its folder)", async () => {
    const lines = await frame({ agentctlDown: false, columns: 140, rows: 40, keys: ['/', '5f0c2d7e', '\r', '\r'] });
    expect(lines.join('\n')).toMatch(/source\s+claude \(\/home\/ana\/\.claude\/sessions\)/);
  });
});
