import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanProcessTable } from '../../src/os/process-table.js';
import { isLinux, killAndReap, spawnSleep } from '../support/processes.js';
import { itOn } from '../support/platform.js';

describe('scanProcessTable', () => {
  itOn(['linux'], 'the proc strategy reads /proc')('proc strategy finds this process with the right ppid and cmd', async () => {
    const r = await scanProcessTable({ strategy: 'proc' });
    if (!r.ok) throw new Error(r.error);
    expect(r.strategy).toBe('proc');
    const me = r.processes.get(process.pid);
    expect(me?.ppid).toBe(process.ppid);
    expect(me?.cmd).toContain('node');
    expect(Math.abs((me?.startedAt ?? 0) - (Date.now() - process.uptime() * 1000))).toBeLessThan(2000);
    // Kernel threads have no cmdline: shown as [name] (kthreadd is pid 2 when the kernel's are visible).
    const kthread = [...r.processes.values()].find((p) => p.ppid === 2);
    if (kthread) expect(kthread.cmd).toBe(`[${kthread.name}]`);
  });

  it('ps-list strategy finds this process with the right ppid and cmd', async () => {
    const r = await scanProcessTable({ strategy: 'ps-list' });
    if (!r.ok) throw new Error(r.error);
    expect(r.strategy).toBe('ps-list');
    const me = r.processes.get(process.pid);
    expect(me?.ppid).toBe(process.ppid);
    expect(me?.cmd).toContain('node');
    expect(me?.startedAt).toBeTypeOf('number');
  });

  it('auto picks /proc on Linux', async () => {
    const r = await scanProcessTable();
    expect(r.ok && r.strategy).toBe(isLinux ? 'proc' : 'ps-list');
  });

  itOn(['linux'], 'the proc strategy reads /proc')('proc strategy sees a child appear and, once reaped, disappear', async () => {
    const child = spawnSleep();
    const before = await scanProcessTable({ strategy: 'proc' });
    expect(before.ok && before.processes.get(child.pid)?.cmd).toBe('sleep 30');
    await killAndReap(child);
    const after = await scanProcessTable({ strategy: 'proc' });
    expect(after.ok && after.processes.has(child.pid)).toBe(false);
  });

  it('throws on abort (cancellation is not an OS failure)', async () => {
    await expect(scanProcessTable({ signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
  });
});

// ps-list runs `execFile('ps', ...)` by bare name, so PATH decides which ps (if any) it gets.
describe('scanProcessTable ps-list when ps is broken', () => {
  let dir = '';
  let savedPath: string | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ghostwatch-ps-'));
    savedPath = process.env.PATH;
  });
  afterEach(() => {
    process.env.PATH = savedPath;
    rmSync(dir, { recursive: true, force: true });
  });
  const fakePs = (body: string): void => {
    writeFileSync(join(dir, 'ps'), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, 'ps'), 0o755);
  };
  const expectOneLine = (error: string, detail: string): void => {
    expect(error).not.toContain('\n');
    expect(error).toBe(`process table unavailable: ps failed (${detail}); liveness is still checked with kill(pid, 0)`);
  };

  it('ps not on PATH (empty dir) → ok:false with one line', async () => {
    process.env.PATH = dir;
    const r = await scanProcessTable({ strategy: 'ps-list' });
    expect(r.ok).toBe(false);
    if (!r.ok) expectOneLine(r.error, 'spawn ps ENOENT');
  });

  it('a ps that rejects the options (BusyBox-like, exit 1) → ok:false', async () => {
    fakePs("echo \"ps: unrecognized option: $1\" >&2\necho 'BusyBox v1.36 multi-call binary.' >&2\nexit 1");
    process.env.PATH = dir;
    const r = await scanProcessTable({ strategy: 'ps-list' });
    expect(r.ok).toBe(false);
    if (!r.ok) expectOneLine(r.error, 'exit code 1: ps: unrecognized option: awwxo');
  });

  it('a ps that ignores the options and prints its own format → ok:false, not an empty table', async () => {
    fakePs("echo 'PID   USER     TIME  COMMAND'\necho '    1 root      0:00 init'");
    process.env.PATH = dir;
    const r = await scanProcessTable({ strategy: 'ps-list' });
    expect(r.ok).toBe(false);
    if (!r.ok) expectOneLine(r.error, 'its output listed no processes');
  });
});
