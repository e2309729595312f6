// A Claude Code record whose startedAt is no time (1e300), read from a real folder by the real
// engine with a real process behind it, in the real App: Enter opens its row and says "invalid
// time" where the time would be, Esc goes back, and q quits.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { claudeSources } from '../../src/sources/claude/index.js';
import { App } from '../../src/ui/app.js';
import { claudeRecord } from '../support/claude-records.js';
import { engineFor, HOST, sleeper, tempDir, until } from '../engine/helpers.js';

const unmounts: (() => void)[] = [];
afterEach(() => {
  for (const u of unmounts.splice(0)) u();
});

describe('a time out of range in the monitor', () => {
  it('a Claude record with startedAt 1e300: Enter shows "invalid time", Esc goes back, q quits', async () => {
    const home = tempDir();
    const claudeDir = join(home, '.claude');
    mkdirSync(join(claudeDir, 'sessions'), { recursive: true });
    const s = sleeper(60);
    // No procStart: the record's own times are what its process would be checked against.
    writeFileSync(join(claudeDir, 'sessions', `${s.pid}.json`), JSON.stringify(claudeRecord(s.pid, 'far-future', { startedAt: 1e300, procStart: undefined })));
    const engine = engineFor(claudeSources({ claudeDirs: [claudeDir], claimsDir: join(home, '.claude-sessions') }, HOST, join(home, 'trash')));
    let quits = 0;
    const r = render(<App engine={engine} size={{ columns: 120, rows: 40 }} onQuit={() => quits++} />);
    unmounts.push(() => r.unmount());
    const frame = () => r.lastFrame() ?? '';
    await until(() => /live\s+far-future/.test(frame()), 8000, () => `the row:\n${frame()}`);

    r.stdin.write('\r');
    await until(() => /startedAt\s+invalid time \(1e\+300\)/.test(frame()), 5000, () => `the detail view:\n${frame()}`);
    expect(frame()).toMatch(/invalid time\s+startedAt 1e\+300: no time within 100 years of now, not used/);
    expect(frame()).not.toMatch(/could not be drawn/);

    r.stdin.write('\u001b');
    await until(() => /VERDICT/.test(frame()), 3000, () => `the table again:\n${frame()}`);
    r.stdin.write('q');
    await until(() => quits === 1, 3000, 'q to quit');
  });
});
