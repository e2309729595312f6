// A part of the screen that throws while it is drawn is one inert error line in its place; the rest
// of the screen, the keys and the updates go on. The real App with a part that throws, and the
// boundaries themselves with components that throw.
import { Text } from 'ink';
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { PartBoundary, ScreenBoundary } from '../../src/ui/components/boundary.js';
import { App } from '../../src/ui/app.js';
import { FIXED_NOW, StaticEngine } from '../support/ui-fixtures.js';
import { firstFrame, nextFrame, typeKeys } from '../support/ink-keys.js';
import { until } from '../support/wait.js';

const unmounts: (() => void)[] = [];
afterEach(() => {
  for (const u of unmounts.splice(0)) u();
});

function Thrower({ error }: { error: unknown }): never {
  throw error;
}

describe('PartBoundary', () => {
  it('draws a part that throws as one inert line, and the parts beside it as usual', async () => {
    const r = render(
      <>
        <Text>above</Text>
        <PartBoundary part="table" width={60}>
          <Thrower error={new Error('bad\u001b[2J\nvalue')} />
        </PartBoundary>
        <Text>below</Text>
      </>,
    );
    unmounts.push(() => r.unmount());
    const frame = await firstFrame(r);
    expect(frame.split('\n')).toEqual(['above', 'table could not be drawn: bad^[[2J^Jvalue', 'below']);
  });

  it('words whatever was thrown (not an Error, an object 10,000 levels deep) and cuts it to the pane', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 10_000; i++) deep = { a: deep };
    const r = render(
      <>
        <PartBoundary part="header" width={40}>
          <Thrower error="\u009b31mplain" />
        </PartBoundary>
        <PartBoundary part="events" width={40}>
          <Thrower error={deep} />
        </PartBoundary>
      </>,
    );
    unmounts.push(() => r.unmount());
    const lines = (await firstFrame(r)).split('\n');
    expect(lines[0]).toBe('header could not be drawn: \\u009b31mpla…');
    expect(lines[1]).toMatch(/^events could not be drawn: \{"a":\{"a/);
    expect(lines[1]!.length).toBeLessThanOrEqual(40);
  });

  it('tries the part again when the screen is drawn again', async () => {
    const part = (fail: boolean) => (
      <PartBoundary part="detail view" width={60}>
        {fail ? <Thrower error={new Error('once')} /> : <Text>drawn</Text>}
      </PartBoundary>
    );
    const r = render(part(true));
    unmounts.push(() => r.unmount());
    expect(await firstFrame(r)).toBe('detail view could not be drawn: once');
    const before = r.lastFrame();
    r.rerender(part(false));
    expect(await nextFrame(r, before)).toBe('drawn');
  });
});

describe('ScreenBoundary', () => {
  it('shows the screen that throws as one line, q still quits, and the next snapshot draws it again', async () => {
    const engine = new StaticEngine();
    let fail = true;
    let quits = 0;
    function Screen() {
      engine.getSnapshot(); // drawn from the engine, as App is
      if (fail) throw new Error('Invalid time value');
      return <Text>the screen</Text>;
    }
    const r = render(
      <ScreenBoundary engine={engine} onQuit={() => quits++} width={() => 80}>
        <Screen />
      </ScreenBoundary>,
    );
    unmounts.push(() => r.unmount());
    expect(await firstFrame(r)).toBe('screen could not be drawn: Invalid time value; q quits');
    r.stdin.write('q');
    await until(() => quits === 1, 3000, 'q to quit');

    fail = false;
    const before = r.lastFrame();
    engine.set(engine.getSnapshot().findings);
    expect(await nextFrame(r, before)).toBe('the screen');
  });
});

describe('the App with a part that throws', () => {
  /** An engine whose process table throws when the detail view asks it (as a formatter that throws would). */
  class ThrowingEngine extends StaticEngine {
    override processInfo(): undefined {
      throw new RangeError('Invalid time value');
    }
  }

  it('the detail view is one error line; Esc goes back, the table follows the engine, q quits', async () => {
    const engine = new ThrowingEngine();
    let quits = 0;
    const r = render(<App engine={engine} now={() => FIXED_NOW} home="/home/ana" size={{ columns: 120, rows: 30 }} onQuit={() => quits++} />);
    unmounts.push(() => r.unmount());
    await firstFrame(r);
    // A row of this host, whose pid the detail view asks the process table about.
    const detail = await typeKeys(r, ['/', '7f3a9c1e', '\r', '\r']);
    expect(detail).toMatch(/^detail view could not be drawn: Invalid time value$/m);
    expect(detail).toMatch(/Esc\s+back/);

    const table = await typeKeys(r, ['\u001b', '\u001b']);
    expect(table).toMatch(/VERDICT/);
    const before = r.lastFrame();
    engine.set(engine.getSnapshot().findings.filter((f) => !f.id.startsWith('7f3a9c1e')));
    expect(await nextFrame(r, before)).not.toMatch(/7f3a9c1e/);

    r.stdin.write('q');
    await until(() => quits === 1, 3000, 'q to quit');
  });
});
