// Which pane an agent runs in: the parent-chain walk over a pid → ppid map, list-panes' lines,
// and tmux's styled status text.
import { describe, expect, it } from 'vitest';
import { matchPanes, MAX_ANCESTRY, paneOf, parseListPanes, tmuxStyled, type TmuxPane } from '../../src/core/index.js';

const pane = (pid: number, target: string, id: string): TmuxPane => ({ pid, target, id });
const WORK = pane(100, 'work:2.1', '%7');
const OTHER = pane(200, 'other:0.0', '%9');
const byPid = new Map([WORK, OTHER].map((p) => [p.pid, p]));

describe('paneOf: walking up the parent chain to a pane’s process', () => {
  it.each<[string, number, [number, number][], TmuxPane | undefined]>([
    ['the agent is the pane’s own process', 100, [], WORK],
    ['the agent is the pane shell’s child', 101, [[101, 100]], WORK],
    ['a grandchild (shell → npx → node)', 103, [[103, 102], [102, 101], [101, 100]], WORK],
    ['the nearest pane wins (a tmux pane inside a pane’s process tree)', 201, [[201, 200], [200, 100]], OTHER],
    ['reparented to init: no pane', 104, [[104, 1]], undefined],
    ['a chain that reaches pid 0', 105, [[105, 0]], undefined],
    ['a parent that is unknown (it vanished mid-read)', 106, [[106, 555]], undefined],
    ['a loop in a torn read does not hang', 107, [[107, 108], [108, 107]], undefined],
    ['no parent known at all', 109, [], undefined],
    ['init itself is never looked up', 1, [[1, 0]], undefined],
  ])('%s', (_name, pid, parents, expected) => {
    expect(paneOf(pid, new Map(parents), byPid)).toEqual(expected);
  });

  it(`gives up after ${MAX_ANCESTRY} ancestors`, () => {
    const deep = (depth: number) => {
      const parents = new Map<number, number>();
      for (let i = 0; i < depth; i++) parents.set(1000 + i, 1000 + i + 1);
      parents.set(1000 + depth, 100);
      return parents;
    };
    expect(paneOf(1000, deep(MAX_ANCESTRY - 1), byPid)).toEqual(WORK);
    expect(paneOf(1000, deep(MAX_ANCESTRY), byPid)).toBeUndefined();
  });
});

describe('matchPanes', () => {
  it('finds each pid its pane and leaves out the pids without one', () => {
    const parents = new Map([[11, 100], [12, 11], [21, 200], [31, 1]]);
    expect(matchPanes([11, 12, 21, 31], parents, [WORK, OTHER])).toEqual(
      new Map([[11, WORK], [12, WORK], [21, OTHER]]),
    );
  });
  it('no panes: nothing, whatever the parents', () => {
    expect(matchPanes([11], new Map([[11, 100]]), []).size).toBe(0);
  });
});

describe('parseListPanes', () => {
  it.each<[string, string, TmuxPane[]]>([
    ['one pane', '100 work:2.1 %7\n', [WORK]],
    ['several, with CRLF', '100 work:2.1 %7\r\n200 other:0.0 %9\r\n', [WORK, OTHER]],
    ['a session name with spaces', '300 my work:0.1 %3', [pane(300, 'my work:0.1', '%3')]],
    ['an escape sequence in a session name is made inert', '301 \u001b[31mred:0.0 %4', [pane(301, '^[[31mred:0.0', '%4')]],
    ['an empty output (no panes)', '', []],
    ['a line without an id', '100 work:2.1', []],
    ['a pid that is not a number', 'abc work:0.0 %1', []],
    ['pid 0', '0 work:0.0 %1', []],
    ['a bad line among good ones', 'no server running\n100 work:2.1 %7', [WORK]],
  ])('%s', (_name, text, expected) => {
    expect(parseListPanes(text)).toEqual(expected);
  });
});

describe('tmuxStyled', () => {
  it.each<[string, [string, string][], string]>([
    ['one part', [['2 ghost', 'red']], '#[fg=red]2 ghost#[default]'],
    ['parts each in their colour', [['gw', 'green'], ['1 stale', 'yellow']], '#[fg=green]gw#[default] #[fg=yellow]1 stale#[default]'],
    ['a # is printed, not read as a style', [['#[fg=blue]x', 'red']], '#[fg=red]##[fg=blue]x#[default]'],
    ['nothing', [], ''],
  ])('%s', (_name, parts, expected) => {
    expect(tmuxStyled(parts)).toBe(expected);
  });
});
