import { describe, expect, it } from 'vitest';
import { VERDICT_TRAITS, VERDICTS, VERDICTS_WORST_FIRST, type Verdict } from '../../src/core/verdicts.js';
import { REAPABLE } from '../../src/cli/reap.js';
import { checkJson, summaryLine } from '../../src/cli/report.js';
import { VERDICT_ORDER } from '../../src/ui/columns.js';
import { helpLines } from '../../src/ui/help.js';
import { TONE_COLOR, VERDICT_TONE, verdictMarker } from '../../src/ui/theme.js';
import { snapshotOf } from '../support/ui-fixtures.js';

// Every list of verdicts outside core is what core's VERDICT_TRAITS says (verdicts.test.ts pins
// the table itself against design.md). The expected values are written out, not recomputed.
describe('the verdict lists outside core follow VERDICT_TRAITS', () => {
  it('the table sorts worst first (ui/columns)', () => {
    expect(VERDICT_ORDER).toEqual(VERDICTS_WORST_FIRST);
    expect(VERDICT_ORDER).toEqual(['ghost', 'zombie', 'stale-claim', 'reused', 'superseded', 'pending', 'suspended', 'unverified', 'offline', 'remote', 'live', 'held']);
  });

  it('reap evicts exactly the problems, all evictable without force (cli/reap)', () => {
    expect(REAPABLE).toEqual(['ghost', 'zombie', 'reused', 'superseded', 'pending', 'stale-claim']);
    for (const v of REAPABLE) expect(VERDICT_TRAITS[v as Verdict]).toMatchObject({ problem: true, evictable: true });
  });

  it('colours by tone (ui/theme), with the hue in the theme only', () => {
    expect(VERDICT_TONE).toEqual({
      live: 'ok', held: 'ok', ghost: 'problem', zombie: 'problem', 'stale-claim': 'problem',
      reused: 'warning', superseded: 'warning', pending: 'warning', offline: 'muted', remote: 'info', unverified: 'info', suspended: 'warning',
    });
    for (const v of VERDICTS) expect(VERDICT_TONE[v]).toBe(VERDICT_TRAITS[v].tone);
    expect(TONE_COLOR).toEqual({ problem: 'red', warning: 'yellow', ok: 'green', info: 'cyan', muted: 'gray' });
  });

  it('marks each verdict as the table says, the finding\'s problem flag first (ui/theme)', () => {
    const marks = Object.fromEntries(VERDICTS.map((v) => [v, verdictMarker(v, VERDICT_TRAITS[v].problem)]));
    expect(marks).toEqual({
      live: ' ', ghost: '!', zombie: '!', reused: '!', superseded: '!', pending: '!',
      offline: '-', remote: '?', unverified: '?', suspended: '=', held: ' ', 'stale-claim': '!',
    });
    expect(verdictMarker('ghost')).toBe('!');
    expect(verdictMarker('unverified')).toBe('?');
  });

  it('the help explains the markers as before, and each verdict by its meaning (ui/detail)', () => {
    const help = helpLines();
    expect(help).toContainEqual({ label: '!', value: 'a problem: evictable' });
    expect(help).toContainEqual({ label: '?', value: 'cannot be checked here (remote, unverified)' });
    expect(help).toContainEqual({ label: '-', value: 'the registry marks it offline' });
    expect(help).toContainEqual({ label: '=', value: 'stopped: alive, but cannot answer until continued (suspended)' });
    const start = help.findIndex((l) => l.label === 'verdicts' && l.heading);
    expect(start).toBeGreaterThan(0);
    const verdictLines = help.slice(start + 1, start + 1 + VERDICTS.length);
    expect(verdictLines.map((l) => l.label)).toEqual(['!ghost', '!zombie', '!stale-claim', '!reused', '!superseded', '!pending', '=suspended', '?unverified', '-offline', '?remote', ' live', ' held']);
    expect(verdictLines.map((l) => l.value)).toEqual(VERDICTS_WORST_FIRST.map((v) => VERDICT_TRAITS[v].meaning));
  });

  it('the summary line and JSON summary list every verdict in the table\'s order (cli/report)', () => {
    const counts = Object.fromEntries(VERDICTS.map((v, i) => [v, i + 1])) as Record<Verdict, number>;
    expect(summaryLine(counts, 3)).toBe(
      '1 live, 2 ghost, 3 zombie, 4 reused, 5 superseded, 6 pending, 7 offline, 8 remote, 9 unverified, 10 suspended, 11 held, 12 stale-claim (3 problems)',
    );
    const json = checkJson({ ...snapshotOf([]), counts });
    expect(Object.keys(json.summary as object)).toEqual([...VERDICTS]);
  });
});
