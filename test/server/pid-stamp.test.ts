// serve stamps pid_started_at (protocols.md §2) on registrations that carry none, since real
// pi-socket never sends it: only for this host's nodes whose pid is alive, from /proc/<pid>/stat.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { afterEach, expect, it } from 'vitest';
import { cleanup, connectPastInit, registerText, serve, type RawClient } from './helpers.js';
import { describeOn } from '../support/platform.js';
import { deadPid } from '../support/processes.js';

afterEach(cleanup);

/** The start time of `pid` in Unix ms, computed here independently of src/os. */
function startedAtMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  const btime = Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))![1]);
  const hz = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  return btime * 1000 + Math.round((ticks * 1000) / hz);
}

async function registered(a: RawClient, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  a.send(registerText('r', { cwd: '/w', status: 'active', ...params }));
  expect(JSON.parse(await a.reply())).toEqual({ id: 'r', result: { status: 'registered' } });
  a.send('{"id":"l","method":"list_nodes"}');
  const nodes = (JSON.parse(await a.reply()) as { result: Record<string, unknown>[] }).result;
  return nodes.find((n) => n.id === params.id)!;
}

describeOn(['linux'], 'serve and this test read start times from /proc')('pid_started_at stamped by serve', () => {
  it('stamps a live local pid with its process start time (Unix ms)', async () => {
    const { url } = await serve({ hostName: 'thishost.example.org' });
    const a = await connectPastInit(url);
    const node = await registered(a, { id: 'n1', machine: 'thishost', port: 1, pid: process.pid });
    expect(node.pid_started_at).toBe(startedAtMs(process.pid));
    const upper = await registered(a, { id: 'n2', machine: 'THISHOST.example.org', port: 2, pid: process.pid });
    expect(upper.pid_started_at).toBe(startedAtMs(process.pid));
  });

  it("uses this host's name by default", async () => {
    const { url } = await serve();
    const a = await connectPastInit(url);
    const node = await registered(a, { id: 'n1', machine: hostname(), port: 1, pid: process.pid });
    expect(node.pid_started_at).toBe(startedAtMs(process.pid));
  });

  it("keeps a registration's own pid_started_at", async () => {
    const { url } = await serve({ hostName: 'thishost' });
    const a = await connectPastInit(url);
    const node = await registered(a, { id: 'n1', machine: 'thishost', port: 1, pid: process.pid, pid_started_at: 1_234 });
    expect(node.pid_started_at).toBe(1_234);
  });

  it('does not keep a pid_started_at that is no time (1e300): stamps the real start instead, and says so', async () => {
    const lines: string[] = [];
    const { url } = await serve({ hostName: 'thishost', log: (l) => lines.push(l), quiet: false });
    const a = await connectPastInit(url);
    const node = await registered(a, { id: 'n1', machine: 'thishost', port: 1, pid: process.pid, pid_started_at: 1e300 });
    expect(node.pid_started_at).toBe(startedAtMs(process.pid));
    const far = await registered(a, { id: 'n2', machine: 'elsewhere', port: 2, pid: process.pid, pid_started_at: -8.64e15 });
    expect(far).not.toHaveProperty('pid_started_at');
    expect(lines.filter((l) => l.includes('not kept'))).toEqual([
      'serve: n1: not kept, no time within 100 years of now: pid_started_at 1e+300',
      'serve: n2: not kept, no time within 100 years of now: pid_started_at -8640000000000000',
    ]);
  });

  it('leaves it unset for another machine, no pid, or a pid that is gone', async () => {
    const { url } = await serve({ hostName: 'thishost' });
    const a = await connectPastInit(url);
    expect(await registered(a, { id: 'n1', machine: 'elsewhere', port: 1, pid: process.pid })).not.toHaveProperty('pid_started_at');
    expect(await registered(a, { id: 'n2', machine: 'thishost', port: 2 })).not.toHaveProperty('pid_started_at');
    expect(await registered(a, { id: 'n3', machine: 'thishost', port: 3, pid: await deadPid() })).not.toHaveProperty('pid_started_at');
  });
});
