import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOwnerHints, portOwners, socketOwners, type PortOwnership } from '../../src/os/port-owner.js';
import { decodeProcNetAddress, listeningSockets, parseProcNetTcp } from '../../src/os/proc-net.js';
import { killAndReap } from '../support/processes.js';
import { makeWorkbench, runAsNobody, runInNewNetns, skipOrFail, startListener, type Listener, type Workbench } from './listeners.js';
import { describeOn } from '../support/platform.js';

const HEADER = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
const HEADER6 =
  '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
/** A row as the kernel prints it, with the addresses already in its hex. */
const row = (local: string, remote: string, st: string, uid: number | string, inode: number | string): string =>
  `   0: ${local} ${remote} ${st} 00000000:00000000 00:00000000 00000000 ${String(uid).padStart(5)}        0 ${inode} 1 0000000000000000 100 0 0 10 0`;
const ANY4 = '00000000:0000';
const ANY6 = `${'0'.repeat(32)}:0000`;

describe('parseProcNetTcp', () => {
  it('keeps the LISTEN rows of /proc/net/tcp with dotted addresses (little-endian words)', () => {
    const text = [
      HEADER,
      row('0100007F:1F90', ANY4, '0A', 1000, 4242), // 127.0.0.1:8080
      row('00000000:0050', ANY4, '0A', 0, 17), // 0.0.0.0:80
      row('0101A8C0:07E8', ANY4, '0a', 0, 18), // 192.168.1.1:2024, lower-case state
      row('0100007F:A642', '0100007F:9D03', '01', 1000, 99), // ESTABLISHED: not a listener
      row('0100007F:A64E', '0100007F:9D03', '06', 0, 0), // TIME_WAIT
      '',
    ].join('\n');
    expect(parseProcNetTcp(text, 4, 'LE')).toEqual({
      sockets: [
        { port: 8080, address: '127.0.0.1', family: 4, inode: 4242, uid: 1000 },
        { port: 80, address: '0.0.0.0', family: 4, inode: 17, uid: 0 },
        { port: 2024, address: '192.168.1.1', family: 4, inode: 18, uid: 0 },
      ],
      malformed: 0,
    });
  });

  it('reads a big-endian host\'s words as printed', () => {
    expect(parseProcNetTcp(row('7F000001:1F90', ANY4, '0A', 0, 5), 4, 'BE').sockets[0]?.address).toBe('127.0.0.1');
    expect(decodeProcNetAddress(`${'0'.repeat(24)}00000001`, 6, 'BE')).toBe('::1');
  });

  it.each([
    ['00000000000000000000000001000000', '::1'],
    ['00000000000000000000000000000000', '::'],
    ['0000000000000000FFFF00000100007F', '::ffff:127.0.0.1'],
    ['000080FE000000000000000001000000', 'fe80::1'],
    // 2001:db8:0:0:1:0:0:1: two equal zero runs, the first one is compressed (RFC 5952)
    ['B80D0120000000000000010001000000', '2001:db8::1:0:0:1'],
    // 2001:db8:0:1:0:0:0:1: the longer run wins
    ['B80D0120010000000000000001000000', '2001:db8:0:1::1'],
    // no run of two zero groups: nothing is compressed
    ['B80D0120010000000100010001000100', '2001:db8:0:1:1:1:1:1'],
  ])('prints the tcp6 address %s as %s', (hex, text) => {
    const parsed = parseProcNetTcp([HEADER6, row(`${hex}:0BB8`, ANY6, '0A', 0, 77)].join('\n'), 6, 'LE');
    expect(parsed).toEqual({ sockets: [{ port: 3000, address: text, family: 6, inode: 77, uid: 0 }], malformed: 0 });
  });

  it.each([
    ['a truncated row', '   3: 0100007F:1F90 00000000:0000 0A 00000000:00000000'],
    ['a non-hex address', row('0100007G:1F90', ANY4, '0A', 0, 1)],
    ['a short address', row('100007F:1F90', ANY4, '0A', 0, 1)],
    ['an IPv6 address in the IPv4 table', row(`${'0'.repeat(32)}:1F90`, ANY4, '0A', 0, 1)],
    ['a five-digit port', row('0100007F:1F900', ANY4, '0A', 0, 1)],
    ['port 0 listening', row('0100007F:0000', ANY4, '0A', 0, 1)],
    ['a three-digit state', row('0100007F:1F90', ANY4, '0AA', 0, 1)],
    ['a negative uid', row('0100007F:1F90', ANY4, '0A', -1, 1)],
    ['a uid that is not a number', row('0100007F:1F90', ANY4, '0A', 'root', 1)],
    ['an inode past 2^53', row('0100007F:1F90', ANY4, '0A', 0, '99999999999999999999')],
    ['a fractional inode', row('0100007F:1F90', ANY4, '0A', 0, '1.5')],
    ['no "sl:" field', row('0100007F:1F90', ANY4, '0A', 0, 1).replace('0:', 'x:')],
    ['an escape sequence', `\u001b[31m${row('0100007F:1F90', ANY4, '0A', 0, 1)}`],
    ['NUL bytes', row('0100\u00007F:1F90', ANY4, '0A', 0, 1)],
    ['a megabyte of garbage', 'A'.repeat(1 << 20)],
  ])('skips and counts %s', (_name, line) => {
    const good = row('0100007F:0016', ANY4, '0A', 0, 9);
    const parsed = parseProcNetTcp([HEADER, good, line, good].join('\n'), 4, 'LE');
    expect(parsed.malformed).toBe(1);
    expect(parsed.sockets).toHaveLength(2);
  });

  it('does not count the header, blank lines or CRLF endings as malformed', () => {
    const text = `${HEADER}\r\n\r\n   \n${row('0100007F:0016', ANY4, '0A', 0, 9)}\r\n`;
    expect(parseProcNetTcp(text, 4, 'LE')).toMatchObject({ malformed: 0, sockets: [{ port: 22, inode: 9 }] });
  });

  it('takes bytes as well as text', () => {
    const bytes = new TextEncoder().encode(`${HEADER}\n${row('0100007F:0016', ANY4, '0A', 0, 9)}\n`);
    expect(parseProcNetTcp(bytes.subarray(0), 4, 'LE').sockets).toEqual([{ port: 22, address: '127.0.0.1', family: 4, inode: 9, uid: 0 }]);
  });

  it('never throws, whatever it is fed', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.uint8Array({ maxLength: 400 })), fc.constantFrom<4 | 6>(4, 6), (input, family) => {
        const parsed = parseProcNetTcp(input, family);
        const lines = (typeof input === 'string' ? input : Buffer.from(input).toString('latin1')).split('\n').length;
        expect(parsed.malformed).toBeLessThanOrEqual(lines);
      }),
    );
  });
});

describe('listeningSockets from given tables', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-procnet-'));
    writeFileSync(join(dir, 'tcp'), [HEADER, row('0100007F:1F90', ANY4, '0A', 0, 11), row('00000000:1F91', ANY4, '0A', 0, 12), 'junk'].join('\n'));
    writeFileSync(join(dir, 'tcp6'), [HEADER6, row(`${'0'.repeat(32)}:1F90`, ANY6, '0A', 0, 13)].join('\n'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives only the requested ports, IPv4 and IPv6 listeners together, an empty list for a silent port', async () => {
    const r = await listeningSockets([8080, 9999, 0, 70000], { tcp: join(dir, 'tcp'), tcp6: join(dir, 'tcp6') });
    expect(r.ok && [...r.byPort.entries()].map(([p, ss]) => [p, ss.map((s) => `${s.address}#${s.inode}`)])).toEqual([
      [8080, ['127.0.0.1#11', '::#13']],
      [9999, []],
    ]);
    expect(r.ok && r.malformed).toBe(1);
  });

  it('treats a missing tcp6 as "no IPv6" and a missing tcp as unavailable', async () => {
    const noV6 = await listeningSockets([8081], { tcp: join(dir, 'tcp'), tcp6: join(dir, 'nope6') });
    expect(noV6.ok && noV6.byPort.get(8081)?.map((s) => s.address)).toEqual(['0.0.0.0']);
    const noV4 = await listeningSockets([8081], { tcp: join(dir, 'nope'), tcp6: join(dir, 'tcp6') });
    expect(noV4).toEqual({ ok: false, unavailable: expect.stringMatching(/cannot read .*nope \(ENOENT\)/) });
  });

  it('reads tables of any size whole, again and again and side by side, each its own', async () => {
    // ~200 KB: past the first read buffer (64 KiB), so it grows; the listener is the last row.
    const many = (n: number, last: string) => [HEADER, ...Array.from({ length: n }, (_, i) => row('0100007F:1F90', '0100007F:C000', '01', 0, 1000 + i)), last].join('\n');
    writeFileSync(join(dir, 'big'), many(1500, row('0100007F:2710', ANY4, '0A', 0, 77)));
    writeFileSync(join(dir, 'other'), many(10, row('0100007F:2711', ANY4, '0A', 0, 88)));
    const big = { tcp: join(dir, 'big'), tcp6: join(dir, 'tcp6') };
    const other = { tcp: join(dir, 'other'), tcp6: join(dir, 'tcp6') };
    const inodes = (r: Awaited<ReturnType<typeof listeningSockets>>) => (r.ok ? [...r.byPort.values()].flat().map((x) => x.inode) : r.unavailable);
    for (let round = 0; round < 3; round++) {
      const [a, b, c] = await Promise.all([listeningSockets([10000, 10001], big), listeningSockets([10000, 10001], other), listeningSockets([10000, 10001], big)]);
      expect([inodes(a), inodes(b), inodes(c)]).toEqual([[77], [88], [77]]);
      expect(a.ok && a.malformed).toBe(0);
    }
  });

  it('treats an unreadable tcp6 as unavailable, not as "no IPv6 listeners"', async () => {
    const r = await listeningSockets([8080], { tcp: join(dir, 'tcp'), tcp6: dir }); // a folder: EISDIR
    expect(r).toEqual({ ok: false, unavailable: expect.stringMatching(/EISDIR/) });
  });
});

describe('portOwners off Linux', () => {
  it('says it is unavailable instead of throwing', async () => {
    const real = Object.getOwnPropertyDescriptor(process, 'platform') as PropertyDescriptor;
    Object.defineProperty(process, 'platform', { value: 'darwin' });
    try {
      expect(await portOwners([8080])).toEqual({ ok: false, unavailable: expect.stringMatching(/need Linux.*darwin/) });
      expect(await socketOwners([1])).toEqual({ ok: false, unavailable: expect.stringMatching(/darwin/) });
      expect(await listeningSockets([8080])).toEqual({ ok: false, unavailable: expect.stringMatching(/darwin/) });
    } finally {
      Object.defineProperty(process, 'platform', real);
    }
  });
});

describeOn(['linux'], 'the socket table is /proc/net')('portOwners on real listeners', () => {
  let wb: Workbench;
  const spawned: ChildProcess[] = [];
  beforeAll(async () => {
    wb = await makeWorkbench();
  });
  afterEach(async () => {
    await Promise.all(spawned.splice(0).map(killAndReap));
  });
  afterAll(() => wb?.remove());

  async function listen(host: string, ctx: { skip: (note?: string) => never }, port = 0): Promise<Listener> {
    const l = await startListener(wb, host, spawned, port);
    if (typeof l === 'string') return skipOrFail(ctx, `cannot listen on ${host}: ${l}`);
    return l;
  }

  async function ownership(port: number, opts: Parameters<typeof portOwners>[1] = {}): Promise<PortOwnership> {
    const r = await portOwners([port], opts);
    if (!r.ok) throw new Error(r.unavailable);
    return r.ports.get(port) as PortOwnership;
  }

  it.for(['127.0.0.1', '::1'])('lists a child listening on %s with the child as owner', async (host, ctx) => {
    const l = await listen(host, ctx);
    const o = await ownership(l.port);
    expect(o).toEqual({
      port: l.port,
      sockets: [{ address: host, family: host.includes(':') ? 6 : 4, inode: expect.any(Number), uid: process.getuid?.(), pid: l.pid }],
      owners: [l.pid],
      owner: { pid: l.pid },
    });
  });

  it('lists no sockets and no owner for a port nothing listens on', async () => {
    const free = net.createServer();
    await new Promise<void>((r) => free.listen({ host: '127.0.0.1', port: 0 }, r));
    const port = (free.address() as net.AddressInfo).port;
    await new Promise((r) => free.close(r));
    expect(await ownership(port)).toEqual({ port, sockets: [], owners: [] });
  });

  it('forgets a listener once it closes, and once its process is killed', async (ctx) => {
    const closing = await listen('127.0.0.1', ctx);
    const killed = await listen('127.0.0.1', ctx);
    expect((await ownership(closing.port)).owner).toEqual({ pid: closing.pid });
    expect((await ownership(killed.port)).owner).toEqual({ pid: killed.pid });
    await closing.close();
    await killAndReap(killed.child);
    expect(await ownership(closing.port)).toEqual({ port: closing.port, sockets: [], owners: [] });
    expect(await ownership(killed.port)).toEqual({ port: killed.port, sockets: [], owners: [] });
  });

  it('lists both listeners of a port served by two processes (IPv4 and IPv6), and no single owner', async (ctx) => {
    const v4 = await listen('127.0.0.1', ctx);
    const v6 = await listen('::1', ctx, v4.port);
    const o = await ownership(v4.port);
    expect(o.sockets.map((s) => [s.address, s.pid])).toEqual([
      ['127.0.0.1', v4.pid],
      ['::1', v6.pid],
    ]);
    expect(o.owners).toEqual([v4.pid, v6.pid].sort((a, b) => a - b));
    expect(o.owner).toBeUndefined();
    expect(o.ownerUnknownBecause).toBeUndefined();
  });

  it('reads the hinted pid first next time, and corrects a wrong hint', async (ctx) => {
    const l = await listen('127.0.0.1', ctx);
    const hints = createOwnerHints();
    const first = await portOwners([l.port], { hints });
    expect(first.ok && first.ports.get(l.port)?.owner).toEqual({ pid: l.pid });
    const inode = first.ok ? (first.ports.get(l.port)?.sockets[0]?.inode as number) : 0;
    expect(hints.byInode.get(inode)).toBe(l.pid);

    const second = await portOwners([l.port], { hints });
    expect(second.ok && second.ports.get(l.port)?.owner).toEqual({ pid: l.pid });
    expect(second.ok && second.scanned).toBe(1);

    hints.byInode.set(inode, process.pid); // as if the pid were reused by someone else
    const third = await portOwners([l.port], { hints });
    expect(third.ok && third.ports.get(l.port)?.owner).toEqual({ pid: l.pid });
    expect(hints.byInode.get(inode)).toBe(l.pid);
  });

  it('stops at the cap with a reason, and goes on from there on the next calls until it finds the owner', async (ctx) => {
    const l = await listen('127.0.0.1', ctx);
    const hints = createOwnerHints();
    const first = await portOwners([l.port], { hints, maxFds: 1 });
    expect(first.ok && first.capped).toBe(true);
    expect(first.ok && first.ports.get(l.port)?.ownerUnknownBecause).toMatch(/^unknown — search stopped after 1 processes .*goes on next time$/);
    // Each call reads at least one process: one round over the table finds it.
    const bound = readdirSync('/proc').filter((e) => /^\d+$/.test(e)).length + 50;
    let calls = 1;
    let owner: { pid: number } | undefined;
    while (!owner && calls < bound) {
      const r = await portOwners([l.port], { hints, maxFds: 1 });
      owner = r.ok ? r.ports.get(l.port)?.owner : undefined;
      calls++;
    }
    expect(owner).toEqual({ pid: l.pid });
    expect(calls).toBeGreaterThan(1);
  });

  it('honours abort', async (ctx) => {
    const l = await listen('127.0.0.1', ctx);
    await expect(portOwners([l.port], { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    await expect(socketOwners([1], { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('says nothing holds an inode no process has, and ignores unusable inodes', async () => {
    const r = await socketOwners([0, -1, Number.NaN, 2 ** 60, 4_000_000_000]);
    expect(r.ok && r.owners.size).toBe(0);
    expect(r.ok && [...r.unknownBecause.keys()]).toEqual([4_000_000_000]);
    if (r.ok && r.hidden === 0) expect(r.unknownBecause.get(4_000_000_000)).toMatch(/^no process in view holds socket 4000000000/);
  });

  it('lists listeners on 0.0.0.0 and :: with their owners (in a network namespace of its own)', async (ctx) => {
    // Wildcard listeners only inside a fresh network namespace: nothing binds the host's addresses.
    const ran = await runInNewNetns(wb, [process.execPath, wb.netnsProbe, wb.bundle, '0.0.0.0', '::']);
    // Only unshare itself failing (no permission, no tool) is a reason to skip; anything else fails.
    if (ran.spawnError !== undefined || ran.stderr.startsWith('unshare:')) {
      return skipOrFail(ctx, `cannot make a network namespace: ${ran.spawnError ?? ran.stderr.split('\n')[0]}`);
    }
    expect(ran.code, ran.stderr).toBe(0);
    const { listeners, result } = JSON.parse(ran.stdout) as {
      listeners: { host: string; pid: number; port: number }[];
      result: { ok: true; ports: PortOwnership[] };
    };
    expect(result.ok).toBe(true);
    expect(listeners.map((l) => l.host)).toEqual(['0.0.0.0', '::']);
    for (const [i, l] of listeners.entries()) {
      expect(result.ports[i]).toEqual({
        port: l.port,
        sockets: [{ address: l.host, family: l.host === '::' ? 6 : 4, inode: expect.any(Number), uid: expect.any(Number), pid: l.pid }],
        owners: [l.pid],
        owner: { pid: l.pid },
      });
    }
  });

  it('lists a listener another user runs but leaves its owner unknown, saying processes were not readable', async (ctx) => {
    if (process.getuid?.() !== 0) return skipOrFail(ctx, 'needs root: the listener must belong to a user the prober (nobody) cannot read');
    const l = await listen('127.0.0.1', ctx);
    const ran = await runAsNobody(wb, [process.execPath, wb.probe, wb.bundle, String(l.port)]);
    // setpriv missing or refused, or node unreachable for nobody: skip; anything else fails.
    if (ran.spawnError !== undefined || ran.stderr.startsWith('setpriv:') || /EACCES|ERR_MODULE_NOT_FOUND/.test(ran.stderr)) {
      return skipOrFail(ctx, `nobody cannot run node here: ${ran.spawnError ?? ran.stderr.split('\n')[0]}`);
    }
    expect(ran.code, ran.stderr).toBe(0);
    const r = JSON.parse(ran.stdout) as { ok: true; hidden: number; ports: PortOwnership[] };
    expect(r.hidden).toBeGreaterThan(0);
    expect(r.ports).toEqual([
      {
        port: l.port,
        sockets: [{ address: '127.0.0.1', family: 4, inode: expect.any(Number), uid: 0 }],
        owners: [],
        ownerUnknownBecause: `unknown — ${r.hidden} processes not readable`,
      },
    ]);
  });
});
