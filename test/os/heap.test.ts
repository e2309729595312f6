// compactHeapOnce: one compacting full collection, borrowed from V8's gc extension in a throwaway
// context. It must give pages back (the point of it), and leave no `gc` behind for later code.
// The collection is measured in a fresh Node (the built module): a test worker's heap holds the
// runner's own objects, and V8 compacts some pages on its own there, which hides the difference.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { compactHeapOnce } from '../../src/os/heap.js';
import { BUILT, ROOT } from '../support/tmux.js';

const MEASURE = `
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { compactHeapOnce } from ${JSON.stringify(join(ROOT, 'dist/src/os/heap.js'))};
setFlagsFromString('--expose-gc');
const plainGc = runInNewContext('gc');
setFlagsFromString('--no-expose-gc');
// ~25 MB of small objects that reach the old generation, then three in four die.
const all = [];
for (let i = 0; i < 300000; i++) all.push({ n: i, s: 'object ' + i });
plainGc();
plainGc();
for (let i = 0; i < all.length; i++) if (i % 4 !== 0) all[i] = undefined;
const total = () => getHeapStatistics().total_heap_size;
plainGc();
const sparse = total();
plainGc();
const plain = total();
const ok = compactHeapOnce();
const compacted = total();
console.log(JSON.stringify({ ok, sparse, plain, compacted, kept: all.filter(Boolean).length }));
`;

describe.runIf(BUILT)('compactHeapOnce', () => {
  it('gives back the pages a plain full collection leaves a quarter full', () => {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', MEASURE], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
    const m = JSON.parse(out) as { ok: boolean; sparse: number; plain: number; compacted: number; kept: number };
    expect(m.ok).toBe(true);
    expect(m.kept).toBe(75_000);
    // The control: another plain collection gives back next to nothing (measured: 0)...
    expect(m.sparse - m.plain).toBeLessThan(2 * 2 ** 20);
    // ...while this one gives back most of the free room (measured: ~20 MB of ~65).
    expect(m.plain - m.compacted).toBeGreaterThan(10 * 2 ** 20);
  });

  it('leaves no gc function behind: neither here nor in a context made afterwards', () => {
    expect(compactHeapOnce()).toBe(true);
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe('undefined');
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });
});
