// The real App on the real engine, against a real `ghostwatch serve` with real processes.
import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createEngine } from '../../src/engine/index.js';
import { startRegistryServer, type RegistryServer } from '../../src/server/index.js';
import { HypivisorSource } from '../../src/sources/hypivisor/index.js';
import { App } from '../../src/ui/app.js';
import { READ_ONLY_MESSAGE } from '../../src/ui/view-state.js';
import { until } from '../support/wait.js';
import { deadPid, sleeper } from '../support/processes.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A pi-socket-like agent connection; `register` can be sent again (a re-registration). */
async function agent(server: RegistryServer) {
  const ws = new WebSocket(server.url);
  cleanups.push(() => ws.terminate());
  await new Promise((r, j) => ws.once('open', r).once('error', j));
  let n = 0;
  return (id: string, pid: number, port: number) =>
    new Promise((resolve) => {
      const reqId = `r${n++}`;
      const on = (d: WebSocket.RawData) => JSON.parse(String(d)).id === reqId && (ws.off('message', on), resolve(undefined));
      ws.on('message', on);
      ws.send(JSON.stringify({ id: reqId, method: 'register', params: { id, machine: hostname(), cwd: '/tmp/app', port, status: 'active', pid } }));
    });
}

async function monitor(opts: { readOnly?: boolean } = {}) {
  const server = await startRegistryServer({ port: 0, log: () => {} });
  cleanups.push(() => server.close());
  const engine = createEngine({
    sources: [new HypivisorSource({ url: server.url })],
    hostName: hostname(),
    auditLogPath: join(mkdtempSync(join(tmpdir(), 'gw-app-')), 'evictions.jsonl'),
    readOnly: opts.readOnly ?? false,
    intervalScale: 0.4,
  });
  engine.start();
  cleanups.push(() => engine.stop());
  const ui = render(<App engine={engine} readOnly={opts.readOnly ?? false} size={{ columns: 110, rows: 24 }} onQuit={() => {}} />);
  cleanups.push(() => ui.unmount());
  const frame = () => ui.lastFrame() ?? '';
  const press = async (key: string) => {
    ui.stdin.write(key);
    await new Promise((r) => setTimeout(r, 40));
  };
  return { server, engine, ui, frame, press };
}

const ids = (s: RegistryServer) => s.registry.listNodes().map((n) => n.id).sort();

describe('the monitor on a real registry', () => {
  it('d, then y: the deregister reaches the registry and the row goes', async () => {
    const m = await monitor();
    const reg = await agent(m.server);
    await reg('live-one', sleeper().pid, 7001);
    await reg('dead-one', await deadPid(), 7002);
    await until(() => /!ghost\s+dead-one/.test(m.frame()) && /live\s+live-one/.test(m.frame()), 5000, 'both rows');
    await m.press('d');
    await until(() => /Evict 1 entry from the registry\?/.test(m.frame()), 2000, 'the dialog');
    expect(m.frame()).toMatch(/ghost session dead-one pid \d+ in \/tmp\/app: pid \d+ is gone \(ESRCH\)/);
    await m.press('y');
    await until(() => /evicted ghost dead-one/.test(m.frame()), 5000, 'the summary, naming the entry');
    expect(ids(m.server)).toEqual(['live-one']);
    await until(() => !/!ghost\s+dead-one/.test(m.frame()), 3000, 'the row gone');
  });

  it('a row that turns live between the keypress and y is not evicted, and says why', async () => {
    const m = await monitor();
    const reg = await agent(m.server);
    await reg('flip', await deadPid(), 7003);
    await until(() => /!ghost\s+flip/.test(m.frame()), 5000, 'the ghost');
    await m.press('d');
    await until(() => /Evict 1 entry/.test(m.frame()), 2000, 'the dialog');
    await reg('flip', sleeper().pid, 7003); // the agent came back under the same id, alive
    await m.press('y');
    await until(() => /skipped/.test(m.frame()), 5000, 'the refusal');
    expect(m.frame()).toMatch(/evicted 0, 1 skipped \(flip: .*now live/);
    expect(ids(m.server)).toEqual(['flip']);
  });

  it('n (the default) and Esc evict nothing', async () => {
    const m = await monitor();
    const reg = await agent(m.server);
    await reg('keep-me', await deadPid(), 7004);
    await until(() => /!ghost\s+keep-me/.test(m.frame()), 5000, 'the ghost');
    for (const key of ['n', '\u001b', '\r']) {
      await m.press('d');
      await until(() => /Evict 1 entry/.test(m.frame()), 2000, 'the dialog');
      await m.press(key);
      await until(() => /cancelled: nothing evicted/.test(m.frame()), 2000, 'cancelled');
    }
    expect(ids(m.server)).toEqual(['keep-me']);
  });

  it('--read-only turns eviction keys into a one-line explanation', async () => {
    const m = await monitor({ readOnly: true });
    const reg = await agent(m.server);
    await reg('ghost-ro', await deadPid(), 7005);
    await until(() => /!ghost\s+ghost-ro/.test(m.frame()), 5000, 'the ghost');
    // The header says so, and the footer still shows the way to help and out.
    expect(m.frame()).toMatch(/^ghostwatch read-only/);
    expect(m.frame()).toMatch(/q\s+quit/);
    for (const key of ['d', 'X', '\u0004']) {
      await m.press(key);
      expect(m.frame()).toContain(READ_ONLY_MESSAGE);
      expect(m.frame()).not.toMatch(/Evict \d+ entr/);
    }
    expect(ids(m.server)).toEqual(['ghost-ro']);
  });
});
