// The detail view of an entry of another host never shows this host's process of the same pid
// number: the engine's process rows are this host's, and pid 5123 there is not pid 5123 here.
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import type { ProcessInfo } from '../../src/core/types.js';
import { App } from '../../src/ui/app.js';
import { demoFindings, FIXED_NOW, StaticEngine } from '../support/ui-fixtures.js';
import { firstFrame, typeKeys } from '../support/ink-keys.js';

/** An engine whose process table has every pid asked for: a local process named local-only-cmd. */
function everyPidEngine(): { engine: StaticEngine; asked: number[] } {
  const engine = new StaticEngine(demoFindings());
  const asked: number[] = [];
  const processInfo = (pid: number): ProcessInfo => {
    asked.push(pid);
    return { pid, ppid: 1, name: 'local-only', cmd: 'local-only-cmd --secret', startedAt: FIXED_NOW - 60_000 };
  };
  Object.assign(engine, { processInfo });
  return { engine, asked };
}

async function detailOf(engine: StaticEngine, id: string) {
  const r = render(<App engine={engine} now={() => FIXED_NOW} home="/home/ana" size={{ columns: 140, rows: 60 }} onQuit={() => {}} />);
  await firstFrame(r);
  await typeKeys(r, ['/', id, '\r', '\r']);
  return r;
}

describe('the detail view of another host’s entry', () => {
  it('shows no process of this host for its pid; a local entry still shows its own', async () => {
    const { engine, asked } = everyPidEngine();
    const remote = await detailOf(engine, '9e9e9e9e');
    const frame = remote.lastFrame() ?? '';
    expect(frame).toMatch(/laptop\.lan: not this host/);
    expect(frame).not.toMatch(/local-only-cmd/);
    expect(asked).not.toContain(5123);
    remote.unmount();

    const local = await detailOf(engine, '7f3a9c1e');
    expect(local.lastFrame() ?? '').toMatch(/local-only-cmd --secret/);
    local.unmount();
  });
});
