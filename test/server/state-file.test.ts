// `--state-file`: atomic snapshots after changes, and a reload that keeps what may still be
// alive (live local pids, remote hosts) and drops local entries whose process is gone.
import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StateFileWriter } from '../../src/server/index.js';
import { cleanup, connectPastInit, FakeClock, node, registerText, roundTrip, serve, sleepMs, T0 } from './helpers.js';
import { deadPid } from '../support/processes.js';
import { ownFile, PLANTINGS, plantingRequirement } from '../support/planted-files.js';
import { until } from '../support/wait.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gw-state-'));
});
afterEach(async () => {
  await cleanup();
  rmSync(dir, { recursive: true, force: true });
});

function readSnapshot(path: string): { version: number; nodes: Record<string, unknown>[]; claims: Record<string, unknown>[] } {
  return JSON.parse(readFileSync(path, 'utf8')) as never;
}

async function pollSnapshot(path: string, done: (s: ReturnType<typeof readSnapshot>) => boolean): Promise<ReturnType<typeof readSnapshot>> {
  return until(() => {
    try {
      const snap = readSnapshot(path);
      return done(snap) ? snap : undefined;
    } catch {
      return undefined; // not written yet, or mid-rename
    }
  }, 2_000, `the state file ${path} as expected`);
}

describe('writing', () => {
  it('writes a snapshot after changes, through a temp file that is renamed away', async () => {
    const path = join(dir, 'registry.json');
    const clock = new FakeClock();
    const { url } = await serve({ now: clock.now, stateFile: path });
    const agent = await connectPastInit(url);
    await roundTrip(agent, registerText('r', node('n1', { pid: 42 })), { id: 'r', result: { status: 'registered' } });
    await roundTrip(agent, '{"id":"c","method":"claim","params":{"resource":"repo","holder":"n1"}}', { id: 'c', result: { status: 'claimed' } });
    const snap = await pollSnapshot(path, (s) => s.claims.length === 1);
    expect(snap).toEqual({
      version: 1,
      nodes: [{ id: 'n1', machine: 'box', cwd: '/work', port: 9000, status: 'active', pid: 42, last_seen: T0, registered_at: T0 }],
      claims: [{ resource: 'repo', holder: 'n1', acquired_at: T0 }],
    });
    expect(readdirSync(dir)).toEqual(['registry.json']);
  });

  it('coalesces a burst of changes into one write', async () => {
    const path = join(dir, 'registry.json');
    let writes = 0;
    const writer = new StateFileWriter(path, () => ({ version: 1, nodes: [], claims: [], n: ++writes }) as never, { log: () => {} });
    for (let i = 0; i < 50; i++) writer.schedule();
    await sleepMs(200);
    expect(writes).toBe(1);
    writer.schedule();
    writer.flush();
    writer.flush(); // nothing changed since
    expect(writes).toBe(2);
    expect(readSnapshot(path)).toMatchObject({ n: 2 });
  });

  it('flushes the last change on close, inside the coalescing window', async () => {
    const path = join(dir, 'registry.json');
    const server = await serve({ stateFile: path });
    const agent = await connectPastInit(server.url);
    const admin = await connectPastInit(server.url);
    for (let i = 0; i < 20; i++) agent.send(registerText(`r${i}`, node(`n${i}`, { port: 1000 + i })));
    for (let i = 0; i < 20; i++) await agent.reply();
    await roundTrip(admin, '{"id":"d","method":"deregister","params":{"id":"n0"}}', { id: 'd', result: { status: 'deregistered' } });
    await server.close();
    const snap = readSnapshot(path);
    expect(snap.nodes.map((n) => n.id)).toEqual(Array.from({ length: 19 }, (_, i) => `n${i + 1}`));
    expect(snap.nodes.find((n) => n.id === 'n19')?.status).toBe('offline'); // its connection closed on close()
    expect(readdirSync(dir)).toEqual(['registry.json']);
  });

  it('never writes through a symlink planted at a temp-file name; the state file is a new 0600 file', () => {
    const path = join(dir, 'registry.json');
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'precious\n');
    chmodSync(victim, 0o644);
    // The temp name an older release used, and a leftover 0644 temp file under it.
    symlinkSync(victim, `${path}.tmp-${process.pid}`);
    writeFileSync(`${path}.tmp-${process.pid + 1}`, 'stale', { mode: 0o644 });
    const writer = new StateFileWriter(path, () => ({ version: 1, nodes: [], claims: [] }), { log: () => {} });
    writer.schedule();
    writer.flush();
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(statSync(victim).mode & 0o777).toBe(0o644);
    expect(readlinkSync(`${path}.tmp-${process.pid}`)).toBe(victim);
    expect(lstatSync(path).isFile()).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readSnapshot(path)).toEqual({ version: 1, nodes: [], claims: [] });
    expect(readdirSync(dir).sort()).toEqual(['registry.json', `registry.json.tmp-${process.pid + 1}`, `registry.json.tmp-${process.pid}`, 'victim'].sort());
  });

  it('logs once and keeps serving when the file cannot be written', async () => {
    const lines: string[] = [];
    const path = join(dir, 'missing-folder', 'registry.json');
    const server = await serve({ stateFile: path, log: (l) => lines.push(l), quiet: false });
    const agent = await connectPastInit(server.url);
    await roundTrip(agent, registerText('r', node('n1')), { id: 'r', result: { status: 'registered' } });
    await sleepMs(150);
    await roundTrip(agent, registerText('s', node('n2', { port: 2 })), { id: 's', result: { status: 'registered' } });
    await sleepMs(150);
    expect(lines.filter((l) => l.includes('cannot write'))).toHaveLength(1);
  });
});

describe('reading', () => {
  it('a huge or non-regular state file is not read whole (nor waited on): one line, starting empty', async () => {
    const { loadStateFile } = await import('../../src/server/state-file.js');
    const MAX_STATE_FILE_BYTES = 64 * 1024 * 1024;
    const big = join(dir, 'big.json');
    writeFileSync(big, '{"version": 1, "nodes": [], "claims": [], "pad": "');
    truncateSync(big, MAX_STATE_FILE_BYTES + 1);
    const lines: string[] = [];
    expect(await loadStateFile(big, { log: (l) => lines.push(l) })).toEqual({ version: 1, nodes: [], claims: [] });
    expect(lines).toEqual([`serve: state file ${big}: not used (it is larger than ${MAX_STATE_FILE_BYTES} bytes (${MAX_STATE_FILE_BYTES + 1})), starting empty`]);
    const fifo = join(dir, 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    lines.length = 0;
    expect(await loadStateFile(fifo, { log: (l) => lines.push(l) })).toEqual({ version: 1, nodes: [], claims: [] });
    expect(lines).toEqual([`serve: state file ${fifo}: not used (it is not a regular file), starting empty`]);
  });
});

const planting = plantingRequirement();
const withOtherUser = planting === undefined || process.env.CI === 'true' ? describe : describe.skip;

withOtherUser('reading a state file another user could have written', () => {
  // A node on another machine is kept as it is on reload: loaded, it would be in the registry.
  const planted = JSON.stringify({ version: 1, nodes: [node('planted', { machine: 'elsewhere.example' })], claims: [] });

  it.each(PLANTINGS)('a state file $how: not loaded, starting empty, one line', async ({ plant, why }) => {
    if (planting !== undefined) throw new Error(`CI=true and this test ${planting}`);
    chmodSync(dir, 0o755); // uid 65534 plants below it
    const { loadStateFile } = await import('../../src/server/state-file.js');
    const path = plant(join(dir, 'serve'), 'registry.json', planted);
    const lines: string[] = [];
    expect(await loadStateFile(path, { log: (l) => lines.push(l) })).toEqual({ version: 1, nodes: [], claims: [] });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^serve: state file ${path}: not used \\(it.*\\), starting empty$`));
    expect(lines[0]).toMatch(why);
  });

  it('our own 0600 state file in our 0700 folder is loaded', async () => {
    const { loadStateFile } = await import('../../src/server/state-file.js');
    const path = ownFile(join(dir, 'serve'), 'registry.json', planted);
    const lines: string[] = [];
    expect((await loadStateFile(path, { log: (l) => lines.push(l) })).nodes.map((n) => n.id)).toEqual(['planted']);
    expect(lines).toEqual([]);
  });
});

describe('a start that fails', () => {
  it('leaves the file of the instance already listening on that port alone', async () => {
    const path = join(dir, 'registry.json');
    const running = await serve({ stateFile: path });
    const agent = await connectPastInit(running.url);
    await roundTrip(agent, registerText('r', node('n1')), { id: 'r', result: { status: 'registered' } });
    const before = (await pollSnapshot(path, (s) => s.nodes.length === 1)).nodes;
    await expect(serve({ stateFile: path, port: running.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await sleepMs(200);
    expect(readSnapshot(path).nodes).toEqual(before);
    expect(before[0]?.status).toBe('active');
  });
});

describe('reloading', () => {
  it('keeps live local and remote entries (offline as of now) and drops local entries whose pid is dead', async () => {
    const path = join(dir, 'registry.json');
    const gone = await deadPid();
    const here = hostname();
    const live = { id: 'live', machine: here, cwd: '/a', port: 1, status: 'active', pid: process.pid, last_seen: 5, registered_at: 5 };
    const dead = { id: 'dead', machine: here, cwd: '/b', port: 2, status: 'active', pid: gone, last_seen: 5 };
    const remote = { id: 'remote', machine: 'elsewhere.invalid', cwd: '/c', port: 3, status: 'offline', pid: gone, offline_since: 4 };
    const noPid = { id: 'nopid', machine: here.toUpperCase(), cwd: '/d', port: 4, status: 'active' };
    const claims = [
      { resource: 'keep', holder: 'live', pid: process.pid, acquired_at: 5 },
      { resource: 'lose', holder: 'dead', acquired_at: 5 },
    ];
    writeFileSync(path, JSON.stringify({ version: 1, nodes: [live, dead, remote, noPid], claims }));
    const lines: string[] = [];
    const clock = new FakeClock();
    const server = await serve({ now: clock.now, stateFile: path, log: (l) => lines.push(l), quiet: false });
    expect(server.registry.listNodes()).toEqual([
      { ...live, status: 'offline', offline_since: T0 },
      { ...remote, status: 'offline', offline_since: T0 },
      { ...noPid, status: 'offline', offline_since: T0 },
    ]);
    expect(server.registry.listClaims()).toEqual([claims[0]]);
    const dropped = lines.filter((l) => l.includes('dropped'));
    expect(dropped).toEqual([
      expect.stringContaining(`dropped dead ${here}:2 pid ${gone} (process gone)`),
      expect.stringContaining('dropped claim lose (holder dead is gone)'),
    ]);
    const snap = await pollSnapshot(path, (s) => s.nodes.length === 3);
    expect(snap.nodes.map((n) => n.id)).toEqual(['live', 'remote', 'nopid']);
  });

  it('starts empty without a word when the file does not exist', async () => {
    const lines: string[] = [];
    const server = await serve({ stateFile: join(dir, 'none.json'), log: (l) => lines.push(l), quiet: false });
    expect(server.registry.listNodes()).toEqual([]);
    expect(lines).toEqual([]);
  });

  it.each([
    ['not JSON', '{"version": 1, "nodes": [', 'not valid JSON'],
    ['another version', '{"version": 2, "nodes": [], "claims": []}', 'not a version 1 snapshot'],
    ['a JSON array', '[]', 'not a version 1 snapshot'],
  ])('logs one line and starts empty when the file is %s', async (_why, text, said) => {
    const path = join(dir, 'registry.json');
    writeFileSync(path, text);
    const lines: string[] = [];
    const server = await serve({ stateFile: path, log: (l) => lines.push(l), quiet: false });
    expect(server.registry.listNodes()).toEqual([]);
    expect(lines).toEqual([expect.stringContaining(said)]);
  });

  it('logs one line and starts empty when the path is a folder', async () => {
    const path = join(dir, 'a-folder');
    mkdirSync(path);
    const lines: string[] = [];
    const server = await serve({ stateFile: path, log: (l) => lines.push(l), quiet: false });
    expect(server.registry.listNodes()).toEqual([]);
    expect(lines).toEqual([`serve: state file ${path}: not used (it is not a regular file), starting empty`]);
  });

  it('keeps no time that is none (1e300, 100 years and a day away) from the file, one line each', async () => {
    const path = join(dir, 'registry.json');
    const century = 100 * 365.25 * 86_400 + 86_400;
    const far = { id: 'far', machine: 'elsewhere.invalid', cwd: '/', port: 1, status: 'active', last_seen: T0 - century, registered_at: T0, pid_started_at: 1e300 };
    const claims = [
      { resource: 'ok', holder: 'far', acquired_at: T0 },
      { resource: 'later', holder: 'far', acquired_at: T0 + century },
    ];
    writeFileSync(path, JSON.stringify({ version: 1, nodes: [far], claims }));
    const lines: string[] = [];
    const clock = new FakeClock();
    const server = await serve({ now: clock.now, stateFile: path, log: (l) => lines.push(l), quiet: false });
    expect(server.registry.listNodes()).toEqual([{ id: 'far', machine: 'elsewhere.invalid', cwd: '/', port: 1, status: 'offline', offline_since: T0, registered_at: T0 }]);
    expect(server.registry.listClaims()).toEqual([claims[0]]);
    expect(lines.filter((l) => !l.includes('restored'))).toEqual([
      expect.stringContaining(`far: not kept, no time within 100 years of now: last_seen ${T0 - century}, pid_started_at 1e+300`),
      expect.stringContaining(`skipped a claim whose time is none within 100 years of now: acquired_at ${T0 + century}`),
    ]);
  });

  it('skips entries that are not NodeInfo, one line each, and keeps the rest', async () => {
    const path = join(dir, 'registry.json');
    const ok = { id: 'ok', machine: 'elsewhere.invalid', cwd: '/', port: 1, status: 'active' };
    writeFileSync(path, JSON.stringify({ version: 1, nodes: [ok, { id: 5 }, 'x'], claims: [] }));
    const lines: string[] = [];
    const clock = new FakeClock();
    const server = await serve({ now: clock.now, stateFile: path, log: (l) => lines.push(l), quiet: false });
    expect(server.registry.listNodes()).toEqual([{ ...ok, status: 'offline', offline_since: T0 }]);
    expect(lines.filter((l) => l.includes('not a NodeInfo'))).toHaveLength(2);
  });
});
