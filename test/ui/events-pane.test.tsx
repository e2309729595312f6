// The events pane in the real App: `e` opens it over the table, newest first with local times,
// every registry string inert, scrolled by the same keys as the other views, Esc goes back.
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import type { WatchEvent } from '../../src/core/events.js';
import { App } from '../../src/ui/app.js';
import { demoFindings, FIXED_NOW, StaticEngine } from '../support/ui-fixtures.js';
import { until } from '../support/wait.js';
import { firstFrame, typeKeys } from '../support/ink-keys.js';
import { inTimeZone } from '../support/time-zone.js';

inTimeZone('UTC');

async function open(engine: StaticEngine, keys: string[], size = { columns: 100, rows: 20 }) {
  const r = render(<App engine={engine} now={() => FIXED_NOW} home="/home/ana" size={size} onQuit={() => {}} />);
  await firstFrame(r);
  await typeKeys(r, keys);
  if (keys.includes('e')) await drawn(r, (f) => f.includes('events: '));
  return r;
}
const frame = (r: { lastFrame(): string | undefined }) => r.lastFrame() ?? '';
/** Waits (up to 5 s, a busy machine) until the frame shows what a key should have drawn. */
const drawn = (r: { lastFrame(): string | undefined }, ok: (f: string) => boolean): Promise<unknown> =>
  until(() => ok(frame(r)), 5_000, () => `a frame that never came; the last one:\n${frame(r)}`);

const EVENTS: WatchEvent[] = [
  { at: FIXED_NOW - 3_600_000, kind: 'source', source: 'hypivisor', status: 'connected', reading: true, rows: 12 },
  { at: FIXED_NOW - 120_000, kind: 'joined', source: 'hypivisor', rowKind: 'session', id: 'agent-7', verdict: 'live' },
  { at: FIXED_NOW - 61_000, kind: 'offline', source: 'hypivisor', rowKind: 'session', id: 'agent-7', verdict: 'ghost' },
  { at: FIXED_NOW - 60_000, kind: 'judged', source: 'hypivisor', rowKind: 'session', id: 'agent-7', verdict: 'ghost', from: 'live', detail: 'pid 4242 is gone (ESRCH)' },
  { at: FIXED_NOW - 5_000, kind: 'evicted', source: 'hypivisor', rowKind: 'session', id: 'x\u001b]52;c;cHduZWQ=\u0007\u001b[2J', verdict: 'ghost' },
];

describe('the events pane', () => {
  it('e opens it: newest first, each with its local time; Esc goes back to the table', async () => {
    const r = await open(new StaticEngine(demoFindings(), { events: EVENTS }), ['e']);
    const lines = frame(r).split('\n');
    const at = (text: string) => lines.findIndex((l) => l.includes(text));
    expect(frame(r)).toContain('events: the last 5, newest first');
    expect(lines[at('evicted from hypivisor')]).toMatch(/^\s+09:29:55\s+x\^\[\]52;c;cHduZWQ=\^G\^\[\[2J evicted from hypivisor/);
    expect(lines[at('judged ghost')]).toMatch(/09:29:00\s+agent-7 judged ghost \(was live\): pid 4242 is gone \(ESRCH\)/);
    expect(lines[at('went offline')]).toContain('09:28:59');
    expect(lines[at('hypivisor: connected, 12 rows')]).toContain('08:30:00');
    expect([at('evicted'), at('judged'), at('went offline'), at('joined'), at('connected, 12')]).toEqual([...[at('evicted'), at('judged'), at('went offline'), at('joined'), at('connected, 12')]].sort((a, b) => a - b));
    expect(at('evicted')).toBeGreaterThan(0);
    // Nothing from a registry reaches the terminal as a control character.
    expect(frame(r)).not.toMatch(/\u001b\]|\u0007/);
    expect(frame(r)).toMatch(/ Esc {2}back\b/);

    r.stdin.write('\u001b');
    await drawn(r, (f) => !f.includes('events: the last'));
    expect(frame(r)).not.toContain('events: the last');
    expect(frame(r)).toContain('VERDICT');
    r.unmount();
  });

  it('scrolls with the keys of every view: j, G, g', async () => {
    const many: WatchEvent[] = Array.from({ length: 60 }, (_, i) => ({ at: FIXED_NOW - (60 - i) * 1_000, kind: 'joined', source: 'hypivisor', rowKind: 'session', id: `agent-${i}`, verdict: 'live' }));
    const r = await open(new StaticEngine(demoFindings(), { events: many }), ['e']);
    expect(frame(r)).toContain('agent-59 joined');
    expect(frame(r)).not.toContain('agent-0 joined');
    r.stdin.write('G');
    await drawn(r, (f) => f.includes('agent-0 joined'));
    expect(frame(r)).toContain('agent-0 joined');
    expect(frame(r)).not.toContain('agent-59 joined');
    r.stdin.write('g');
    await drawn(r, (f) => f.includes('agent-59 joined'));
    r.stdin.write('j');
    await drawn(r, (f) => !f.includes('agent-59 joined'));
    expect(frame(r)).not.toContain('agent-59 joined');
    expect(frame(r)).toContain('agent-58 joined');
    r.unmount();
  });

  it('new events appear while it is open; before the first full view it says it is waiting', async () => {
    const engine = new StaticEngine(demoFindings(), { settled: false, events: [] });
    const r = await open(engine, ['e']);
    expect(frame(r)).toContain('events: waiting for the first full view of every registry');
    engine.set(demoFindings(), { events: EVENTS.slice(0, 1) });
    await drawn(r, (f) => f.includes('connected, 12 rows'));
    expect(frame(r)).toContain('hypivisor: connected, 12 rows');
    r.unmount();
  });

  it('is in the footer of the table, as e events', async () => {
    const r = await open(new StaticEngine(demoFindings()), [], { columns: 160, rows: 20 });
    expect(frame(r)).toMatch(/ e {2}events /);
    r.unmount();
  });
});
