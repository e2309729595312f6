// The costs bench's child: the real engine over 10,000 agents of this host, on a provider that
// answers for every pid as /proc would (alive, sleeping, its start), `without` the CPU time and
// memory readings the CPU% and MEM columns are made of, with them (`columns`), or with them and
// every agent's WebSocket port asked whether it answers, answered at once (`answering`: the "not
// answering" facts, which are not a column). After six full probes (at the default cadence) it
// prints one JSON line: its RSS and heap after a full GC.
// Run: node --expose-gc costs-child.js without|columns|answering
import { createEngine } from '../src/engine/index.js';
import type { ProbeProvider } from '../src/os/provider.js';
import type { PidFacts, ProcessInfo, SessionEntry } from '../src/core/types.js';
import { fixedSource } from './fixed-source.js';
import { readFileSync } from 'node:fs';

const AGENTS = 10_000;
const HOST = 'devbox';
const FULL_PROBES = 6;
const mode = process.argv[2];
if (mode !== 'without' && mode !== 'columns' && mode !== 'answering') throw new Error(`costs-child: without, columns or answering, not ${mode}`);
const withCosts = mode !== 'without';
const answering = mode === 'answering';
const START = Date.now() - 3_600_000;
const MIB = 1024 * 1024;

const sessions: SessionEntry[] = [];
for (let i = 0; i < AGENTS; i++) {
  const pid = 100_000 + i;
  sessions.push({
    source: 'hypivisor',
    id: `019a3f2c-7b1e-7c00-8000-${i.toString(16).padStart(12, '0')}`,
    machine: HOST,
    cwd: `/home/dev/work/project-${i % 97}`,
    port: 20_000 + i,
    portProtocol: answering ? 'websocket' : undefined,
    pid,
    status: 'active',
    registeredAt: START + 1_000,
  });
}

const source = fixedSource(sessions);

const provider: ProbeProvider = {
  host: HOST,
  async probePids(pids, opts) {
    const now = opts.now?.() ?? Date.now();
    const out = new Map<number, PidFacts>();
    for (const pid of pids) {
      // Idle agents: their CPU time stands still, their memory as it was.
      const readings = opts.full === true && withCosts ? { cpuMs: (pid % 997) * 31, rssBytes: (80 + (pid % 200)) * MIB } : {};
      out.set(pid, opts.full === true ? { pid, kill: 'ok', state: 'S', startedAt: START, startTicks: pid, checkedAt: now, ...readings } : { pid, kill: 'ok', checkedAt: now });
    }
    return out;
  },
  stillRunning: () => true,
  probePortFacts: async () => new Map(),
  async scanProcessTable(opts) {
    const processes = new Map<number, ProcessInfo>();
    for (const pid of opts.pids ?? []) processes.set(pid, { pid, ppid: 1, name: 'node', cmd: `node /usr/lib/node_modules/pi/cli.js --session ${pid}`, startedAt: START });
    return { ok: true, strategy: 'proc', processes, scannedAt: Date.now() };
  },
};

const engine = createEngine({
  sources: [source],
  hostName: HOST,
  intervalScale: 1,
  readOnly: true,
  auditLogPath: '/dev/null',
  probes: provider,
  upgradeProbe: { listening: async (ports) => new Set(ports), ask: async () => ({ result: 'answered', detail: 'HTTP/1.1 400 Bad Request', ms: 1 }) },
});
engine.start();
await engine.settled(60_000);
const end = Date.now() + 120_000;
while (engine.stats().probes.full < FULL_PROBES && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
const gc = (globalThis as { gc?: () => void }).gc;
for (let i = 0; i < 3; i++) gc?.();
await new Promise((r) => setTimeout(r, 200));
const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
const snap = engine.getSnapshot();
const withUsage = snap.findings.filter((f) => f.evidence.usage !== undefined).length;
process.stdout.write(`${JSON.stringify({ rssMb: kb / 1024, heapMb: process.memoryUsage().heapUsed / MIB, findings: snap.findings.length, withUsage, handshakes: snap.findings.filter((f) => f.evidence.handshake).length })}\n`);
await engine.stop();
process.exit(0);
