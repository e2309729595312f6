// A registry entry whose values nest 100,000 levels deep (issue 13), as a source that does not cap
// depth would hand it over: the detail view shows it as one flat line, the filter matches over it,
// and neither overflows the stack. The real App over the real reconcile.
import chalk from 'chalk';
import { render } from 'ink-testing-library';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultPolicy, reconcile, type SessionEntry } from '../../src/core/index.js';
import { DEEPER_MARK } from '../../src/core/sanitize.js';
import { detailLines } from '../../src/ui/detail.js';
import { App } from '../../src/ui/app.js';
import { FIXED_NOW, HOST, StaticEngine } from '../support/ui-fixtures.js';

const LEVELS = 100_000;

/** An array nested LEVELS deep, built by a loop (no recursion anywhere in the test). */
function deepArray(): unknown[] {
  let v: unknown[] = [1];
  for (let i = 1; i < LEVELS; i++) v = [v];
  return v;
}
function deepObject(): Record<string, unknown> {
  let v: Record<string, unknown> = { leaf: 'x' };
  for (let i = 1; i < LEVELS; i++) v = { a: v };
  return v;
}

function deepFindings() {
  const raw = { id: 'deep-one', machine: HOST, cwd: '/tmp/deep', pid: deepArray(), meta: deepObject(), tags: ['a', { b: 2 }] };
  const sessions: SessionEntry[] = [
    { source: 'hypivisor', id: 'deep-one', machine: HOST, cwd: '/tmp/deep', status: 'active', pid: raw.pid, port: deepArray(), raw },
    { source: 'hypivisor', id: 'plain-two', machine: HOST, cwd: '/tmp/plain', status: 'active', pid: 1, raw: { id: 'plain-two' } },
  ];
  return reconcile({ sessions, claims: [] }, { pids: new Map(), ports: new Map() }, FIXED_NOW, defaultPolicy(HOST));
}

const settle = () => new Promise((r) => setTimeout(r, 30));
let level: typeof chalk.level;
beforeEach(() => {
  level = chalk.level;
  chalk.level = 0;
});
afterEach(() => {
  chalk.level = level;
});

describe('values nested 100,000 levels deep', () => {
  it('the detail lines show each raw field as one flat line, the deep ones cut with the marker', () => {
    const f = deepFindings().find((x) => x.id === 'deep-one')!;
    const lines = detailLines(f, FIXED_NOW);
    const meta = lines.find((l) => l.label === 'meta')!;
    expect(meta.value).toMatch(/^\{"a":\{"a":/);
    expect(meta.value).not.toContain('\n');
    expect(Array.from(meta.value).length).toBeLessThanOrEqual(400);
    expect(lines.find((l) => l.label === 'tags')!.value).toBe('["a",{"b":2}]');
    // Short enough to be whole: the marker where the depth was cut.
    const shallow = detailLines({ ...f, entry: { ...f.entry, raw: { nested: deepArray().slice(0) } } } as typeof f, FIXED_NOW);
    expect(shallow.find((l) => l.label === 'nested')!.value).toBe(`${'['.repeat(32)}"${DEEPER_MARK}"${']'.repeat(32)}`);
  });

  it('the App opens the detail view and filters over it without a crash', async () => {
    const engine = new StaticEngine(deepFindings());
    const r = render(<App engine={engine} now={() => FIXED_NOW} size={{ columns: 120, rows: 30 }} onQuit={() => {}} />);
    try {
      await settle();
      expect(r.lastFrame()).toContain('deep-one');
      // The filter matches over every row's pid and port (deep here) and keeps the matching one.
      for (const k of ['/', 'd', 'e', 'e', 'p']) {
        r.stdin.write(k);
        await settle();
      }
      expect(r.lastFrame()).toContain('deep-one');
      expect(r.lastFrame()).not.toContain('plain-two');
      r.stdin.write('\r');
      await settle();
      r.stdin.write('\r'); // the detail view of the row under the cursor
      await settle();
      const frame = r.lastFrame() ?? '';
      expect(frame).toContain('registry entry');
      expect(frame).toMatch(/meta\s+\{"a":\{"a":/);
    } finally {
      r.unmount();
    }
  });
});
