// An agent bound to the host's own address only (not loopback, not a wildcard): a loopback
// connect is refused, yet something listens. The socket table says so, and the port counts as
// answering: never a false ghost. The host address lives in a network namespace of our own.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { combine } from '../../src/os/port-facts.js';
import { isLinux } from '../support/processes.js';

const ROOT = join(import.meta.dirname, '../..');
const BUILT = join(ROOT, 'dist/src/os/port-facts.js');
const requirement = !isLinux ? 'needs Linux' : process.getuid?.() !== 0 ? 'needs root (unshare --net, ip addr)' : !existsSync(BUILT) ? 'dist/ is not built' : undefined;
const maybe = requirement === undefined || process.env.CI === 'true' ? describe : describe.skip;

const SCRIPT = `
import { createServer } from 'node:net';
const { probePortFacts } = await import(${JSON.stringify(`file://${BUILT}`)});
const server = createServer().listen(0, '10.200.0.1');
await new Promise((r) => server.once('listening', r));
const port = server.address().port;
const facts = await probePortFacts([port], { timeoutMs: 500 });
process.stdout.write(JSON.stringify({ port, pid: process.pid, facts: facts.get(port) }));
server.close();
`;

maybe('a port bound to a non-loopback address only', () => {
  it('is open by the socket table, naming the address and the process, though loopback refuses', async () => {
    if (requirement !== undefined) throw new Error(`CI=true and this test ${requirement}`);
    const shell = `ip link set lo up && ip addr add 10.200.0.1/32 dev lo && exec "$0" --input-type=module -e "$1"`;
    const out = await new Promise<string>((resolve, reject) =>
      execFile('unshare', ['--net', 'sh', '-c', shell, process.execPath, SCRIPT], { timeout: 15_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}: ${stderr}`)) : resolve(stdout))),
    );
    const { pid, facts } = JSON.parse(out) as { pid: number; facts: { result: string; detail: string; listeners: string[]; owners: number[] } };
    expect(facts.result).toBe('open');
    expect(facts.listeners).toEqual(['10.200.0.1']);
    expect(facts.owners).toEqual([pid]);
    expect(facts.detail).toMatch(/^listening on 10\.200\.0\.1 \(socket table\); 127\.0\.0\.1 and ::1 refused|^listening on 10\.200\.0\.1 \(socket table\); 127\.0\.0\.1 refused/);
  });
});

describe('combine: the connect probe and the socket table', () => {
  const refused = { port: 8080, result: 'refused' as const, detail: '127.0.0.1 and ::1 refused', checkedAt: 1 };
  it('a refused connect with no listener stays refused', () => {
    expect(combine(refused, { port: 8080, sockets: [], owners: [] })).toMatchObject({ result: 'refused', owners: undefined, listeners: undefined });
  });
  it('an open connect keeps its own detail and gains the owners', () => {
    const open = { port: 8080, result: 'open' as const, detail: '127.0.0.1', checkedAt: 1 };
    const own = { port: 8080, sockets: [{ address: '0.0.0.0', family: 4 as const, inode: 9, uid: 0, pid: 77 }], owners: [77], owner: { pid: 77 } };
    expect(combine(open, own)).toMatchObject({ result: 'open', detail: '127.0.0.1', owners: [77], listeners: ['0.0.0.0'] });
  });
  it('an owner that could not be read is said why', () => {
    const own = { port: 8080, sockets: [{ address: '127.0.0.1', family: 4 as const, inode: 9, uid: 0 }], owners: [], ownerUnknownBecause: 'unknown — 3 processes not readable' };
    expect(combine({ ...refused, result: 'open', detail: '127.0.0.1' }, own)).toMatchObject({ owners: undefined, ownerUnknown: 'unknown — 3 processes not readable' });
  });
});

describe('probePortFacts with no port', () => {
  // In a quiet child: the bytes it reads (rchar of /proc/self/io) around each call. The socket
  // tables are at least their header lines (~150 bytes each); /proc/self/io is read alike each time.
  const QUIET = `
import { readFileSync } from 'node:fs';
const { probePortFacts } = await import(${JSON.stringify(`file://${BUILT}`)});
const rchar = () => Number(/rchar: (\\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))[1]);
const cost = async (ports) => { const a = rchar(); const facts = await probePortFacts(ports, { timeoutMs: 200 }); const b = rchar(); return { bytes: b - a, size: facts.size }; };
await cost([1]);
const idle = rchar(); const idleBytes = rchar() - idle;
process.stdout.write(JSON.stringify({ none: await cost([]), one: await cost([1]), idleBytes }));
`;
  it.runIf(isLinux && existsSync(BUILT))('reads no socket table and answers nothing; one port reads both tables', async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--input-type=module', '-e', QUIET], { timeout: 15_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}: ${stderr}`)) : resolve(stdout))),
    );
    const { none, one, idleBytes } = JSON.parse(out) as { none: { bytes: number; size: number }; one: { bytes: number; size: number }; idleBytes: number };
    expect(none.size).toBe(0);
    expect(none.bytes).toBeLessThanOrEqual(idleBytes + 16);
    expect(one.size).toBe(1);
    expect(one.bytes).toBeGreaterThan(idleBytes + 200);
  });
});
