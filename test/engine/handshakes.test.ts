// The "not answering" note on real agents: a real pi-like agent's own WebSocket port answers, and
// its row stays plain live (no probe kept); an agent whose event loop hangs (its ws server still accepts TCP in the
// kernel, and never answers the upgrade) is noted "not answering" after two probes, still live and
// no problem; once its loop runs again the note goes. A stopped agent is not asked at all.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { expect, it } from 'vitest';
import { NOT_ANSWERING } from '../../src/core/rules/answering.js';
import { startPiAgent } from '../support/pi-agent.js';
import { describeOn } from '../support/platform.js';
import { ROOT } from '../support/tmux.js';
import { freePort } from '../support/ports.js';
import { agent, engineFor, finding, killAndReap, onCleanup, serve, sleeper, source, track, until, verdictOf } from './helpers.js';

/**
 * A node process serving WebSocket on a loopback port (the `ws` library, as pi-socket does). On
 * "hang" from stdin its event loop blocks for `seconds` (the kernel still accepts connections);
 * it prints its port first, and "back" when its loop runs again.
 */
async function wsAgent(): Promise<{ pid: number; port: number; hang(seconds: number): void; back: Promise<void> }> {
  const script = `
    const { WebSocketServer } = require('ws');
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    wss.on('listening', () => process.stdout.write('port ' + wss.address().port + '\\n'));
    require('node:readline').createInterface({ input: process.stdin }).on('line', (l) => {
      const m = /^hang (\\d+)$/.exec(l);
      if (!m) return;
      const until = Date.now() + Number(m[1]) * 1000;
      while (Date.now() < until) {}
      process.stdout.write('back\\n');
    });`;
  const child = track(spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] }));
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve) => lines.once('line', (l) => resolve(Number(l.split(' ')[1]))));
  const back = new Promise<void>((resolve) => lines.on('line', (l) => l === 'back' && resolve()));
  return { pid: child.pid, port, hang: (seconds) => child.stdin!.write(`hang ${seconds}\n`), back };
}

describeOn(['linux'], 'pids are checked on /proc; the request goes to this host\'s loopback')('an agent\'s own port, asked whether it answers', () => {
  it('a real pi-like agent answers: its row stays plain live, and no probe is kept for it', async () => {
    const s = await serve();
    const pi = await startPiAgent(s.url);
    onCleanup(() => killAndReap(pi.child));
    const engine = engineFor([source(s.url)], { intervalScale: 0.25 });
    await until(() => verdictOf(engine, pi.id) === 'live', 10_000, 'live');
    const rounds = engine.stats().handshakes ?? 0;
    await until(() => (engine.stats().handshakes ?? 0) >= rounds + 3, 10_000, 'three rounds of the probe');
    const f = finding(engine.getSnapshot(), pi.id)!;
    expect(f).toMatchObject({ verdict: 'live', problem: false });
    expect(f.note).toBeUndefined();
    expect(f.evidence.handshake).toBeUndefined();
  });

  it('an agent whose loop hangs is noted "not answering" after two probes, live and no problem; the note goes once it runs again', async () => {
    const s = await serve();
    const hung = await wsAgent();
    await agent(s.url, 'hung', { pid: hung.pid, port: hung.port });
    const engine = engineFor([source(s.url)], { intervalScale: 0.25 });
    await until(() => verdictOf(engine, 'hung') === 'live' && (engine.stats().handshakes ?? 0) >= 2, 10_000, 'live, asked twice');
    expect(finding(engine.getSnapshot(), 'hung')!.evidence.handshake).toBeUndefined();

    hung.hang(8);
    const f = await until(() => {
      const x = finding(engine.getSnapshot(), 'hung');
      return x?.note === NOT_ANSWERING ? x : undefined;
    }, 20_000, () => `noted, not ${JSON.stringify(finding(engine.getSnapshot(), 'hung')?.evidence.handshake)}`);
    expect(f).toMatchObject({ verdict: 'live', problem: false, evictable: false, evidence: { handshake: { port: hung.port, result: 'timeout', misses: 2, boundMs: 500 } } });
    expect(f.reason).toBe(`pid ${hung.pid} is alive; but its port ${hung.port} gave no answer within 500ms to a WebSocket upgrade, 2 times in a row`);
    expect(engine.getSnapshot().problems).toBe(0);

    await hung.back;
    await until(() => {
      const x = finding(engine.getSnapshot(), 'hung');
      return x?.verdict === 'live' && x.note === undefined && x.evidence.handshake === undefined;
    }, 10_000, 'answering again, the note and the probe gone');
  });

  it('a port nothing listens on is not asked: no probe, no note, whatever the rounds', async () => {
    const s = await serve();
    const child = sleeper();
    await agent(s.url, 'quiet', { pid: child.pid, port: await freePort() });
    const engine = engineFor([source(s.url)], { intervalScale: 0.25 });
    await until(() => verdictOf(engine, 'quiet') === 'live' && (engine.stats().handshakes ?? 0) >= 4, 10_000, 'live, four rounds');
    expect(finding(engine.getSnapshot(), 'quiet')!.evidence.handshake).toBeUndefined();
  });

  it('a stopped agent is suspended and not asked: no probe, no note', async () => {
    const s = await serve();
    const pi = await startPiAgent(s.url);
    onCleanup(() => killAndReap(pi.child));
    const engine = engineFor([source(s.url)], { intervalScale: 0.25 });
    await until(() => verdictOf(engine, pi.id) === 'live' && (engine.stats().handshakes ?? 0) >= 1, 10_000, 'live, asked');
    process.kill(pi.pid, 'SIGSTOP');
    onCleanup(() => process.kill(pi.pid, 'SIGCONT'));
    await until(() => verdictOf(engine, pi.id) === 'suspended', 10_000, 'suspended');
    // Rounds go on without it: a stopped agent would let every bound pass, and is not asked.
    const rounds = engine.stats().handshakes ?? 0;
    await until(() => (engine.stats().handshakes ?? 0) >= rounds + 4, 10_000, 'four more rounds');
    const f = finding(engine.getSnapshot(), pi.id)!;
    expect(f).toMatchObject({ verdict: 'suspended' });
    expect(f.note).toBeUndefined();
    expect(f.evidence.handshake).toBeUndefined();
  });
});
