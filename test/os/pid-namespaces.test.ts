// This machine's pid namespaces as /proc shows them: a real namespace (unshare --pid) mapped
// through NSpid, gone once its last process dies; and a /proc tree laid out in a folder for what
// a live machine cannot be made to show at will (a link denied to us, a hidepid mount, no root).
import { mkdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INITIAL_PID_NAMESPACE, namespaceOfLink, parseNsPid, procHidingOptions, readPidNamespaces } from '../../src/os/pid-namespaces.js';
import { exited, inPidNamespace, pidNamespaceOf, tempDir } from '../engine/helpers.js';
import { describeOn } from '../support/platform.js';

describe('pid namespace texts', () => {
  it('reads a namespace link, an NSpid line and the hiding options of a proc mount', () => {
    expect(namespaceOfLink('pid:[4026531836]')).toBe('4026531836');
    expect(namespaceOfLink('net:[4026531836]')).toBeUndefined();
    expect(parseNsPid('Name:\tsleep\nNSpid:\t48213\t7\t2\nNSgid:\t1\n')).toEqual([48213, 7, 2]);
    expect(parseNsPid('NSpid:\t4242\n')).toEqual([4242]);
    expect(parseNsPid('Name:\tsleep\n')).toBeUndefined();
    expect(parseNsPid('NSpid:\t0\t2\n')).toBeUndefined();
    const mounts = (opts: string) => `sysfs /sys sysfs rw 0 0\nproc /proc proc ${opts} 0 0\n`;
    expect(procHidingOptions(mounts('rw,relatime'))).toBeUndefined();
    expect(procHidingOptions(mounts('rw,relatime,hidepid=0'))).toBeUndefined();
    expect(procHidingOptions(mounts('rw,relatime,hidepid=2'))).toBe('/proc is mounted with hidepid=2');
    expect(procHidingOptions(mounts('rw,hidepid=invisible'))).toBe('/proc is mounted with hidepid=invisible');
    expect(procHidingOptions(mounts('rw,subset=pid'))).toBe('/proc is mounted with subset=pid');
    expect(procHidingOptions('proc /other proc rw,hidepid=2 0 0\n')).toBeUndefined();
  });
});

/** A /proc laid out in a folder: `self` and processes, each with its ns/pid link and status. */
function fakeProc(processes: { pid: number; ns?: string; nsPid: number[]; deniedLink?: boolean }[], mountOpts = 'rw'): string {
  const root = tempDir();
  const proc = join(root, 'proc');
  mkdirSync(join(proc, 'self', 'ns'), { recursive: true });
  symlinkSync(`pid:[${INITIAL_PID_NAMESPACE}]`, join(proc, 'self', 'ns', 'pid'));
  writeFileSync(join(proc, 'mounts'), `proc ${proc} proc ${mountOpts} 0 0\n`);
  for (const p of processes) {
    mkdirSync(join(proc, String(p.pid), 'ns'), { recursive: true });
    // A link readlink cannot read stands for one the kernel denies us (EINVAL here, EACCES there).
    if (p.deniedLink) writeFileSync(join(proc, String(p.pid), 'ns', 'pid'), '');
    else symlinkSync(`pid:[${p.ns}]`, join(proc, String(p.pid), 'ns', 'pid'));
    writeFileSync(join(proc, String(p.pid), 'status'), `Name:\tx\nNSpid:\t${p.nsPid.join('\t')}\n`);
  }
  const machineId = join(root, 'machine-id');
  writeFileSync(machineId, `${'a'.repeat(32)}\n`);
  return root;
}

const read = (root: string, wanted: string[], euid = 0) =>
  readPidNamespaces(new Set(wanted), { procRoot: join(root, 'proc'), machineIdPaths: [join(root, 'machine-id')], euid, now: () => 42 });

describe('reading pid namespaces from a /proc tree', () => {
  it('maps each asked namespace: its own pid to ours; a namespace no process holds is null; ours is never asked', () => {
    const root = fakeProc([
      { pid: 10, ns: INITIAL_PID_NAMESPACE, nsPid: [10] },
      { pid: 500, ns: '4026532999', nsPid: [500, 1] },
      { pid: 501, ns: '4026532999', nsPid: [501, 2] },
      { pid: 600, ns: '4026532111', nsPid: [600, 1] },
    ]);
    // '' stands for a domain that names no Linux namespace: nothing to look for.
    const facts = read(root, ['4026532999', '4026532555', INITIAL_PID_NAMESPACE, '']);
    expect(facts).toMatchObject({ machineId: 'a'.repeat(32), own: INITIAL_PID_NAMESPACE, initial: true, blind: undefined, checkedAt: 42 });
    expect([...facts.namespaces.keys()].sort()).toEqual(['4026532555', '4026532999']);
    expect(facts.namespaces.get('4026532999')).toEqual(new Map([[1, 500], [2, 501]]));
    expect(facts.namespaces.get('4026532555')).toBeNull();
  });

  it('a link denied to us is harmless for a process of our own namespace, and makes the facts blind otherwise', () => {
    const ours = read(fakeProc([{ pid: 1, deniedLink: true, nsPid: [1] }, { pid: 500, ns: '4026532999', nsPid: [500, 2] }]), ['4026532999']);
    expect(ours.blind).toBeUndefined();
    const theirs = read(fakeProc([{ pid: 700, deniedLink: true, nsPid: [700, 3] }]), ['4026532999']);
    expect(theirs.blind).toBe('the pid namespace of 1 process could not be read');
    expect(theirs.namespaces.get('4026532999')).toBeNull();
  });

  it('is blind when not root or when /proc hides processes', () => {
    expect(read(fakeProc([]), ['4026532999'], 1000).blind).toMatch(/^not root/);
    expect(read(fakeProc([], 'rw,hidepid=2'), ['4026532999']).blind).toBe('/proc is mounted with hidepid=2');
  });

  it('has no machine-id when none is readable, and is not the initial namespace when ours is another', () => {
    const root = fakeProc([]);
    writeFileSync(join(root, 'machine-id'), 'not an id\n');
    expect(read(root, []).machineId).toBeUndefined();
    const nested = fakeProc([]);
    const self = join(nested, 'proc', 'self', 'ns', 'pid');
    unlinkSync(self);
    symlinkSync('pid:[4026532000]', self);
    expect(read(nested, []).initial).toBe(false);
  });
});

describeOn(['linux'], 'pid namespaces are Linux')('a real pid namespace', () => {
  it('maps the pids of a namespace made with unshare --pid, and finds it gone when its processes die', async () => {
    expect(process.getuid?.(), 'runs as root (CI does): unshare --pid needs it').toBe(0);
    const { unshare, shHost: sh, sleepHost: sleep, ns } = await inPidNamespace();
    const facts = readPidNamespaces(new Set([ns]));
    expect(facts.machineId).toBe(readFileSync('/etc/machine-id', 'utf8').trim());
    expect(facts.own).toBe(pidNamespaceOf(process.pid));
    expect(facts.namespaces.get(ns)).toEqual(new Map([[1, sh], [2, sleep]]));
    process.kill(sh, 'SIGKILL');
    await exited(unshare);
    expect(readPidNamespaces(new Set([ns])).namespaces.get(ns)).toBeNull();
  });
});
