// The idle-CPU half of the costs bench's columns figure: the real engine, on this host's real
// /proc provider, watching the real sleeping processes whose pids the parent passes (one agent
// each), `without` or with (`columns`) the CPU time and memory readings the CPU% and MEM columns
// are made of. The /proc reads are the same in both (the readings come from the stat line the full
// probe reads for the state anyway); `without` drops them from the facts, so everything the
// columns add after the read (the CPU % arithmetic, the figures kept and compared, the snapshots
// they change) is what the two differ by. Once settled and two full probes in, it prints the
// CPU time it used over the window as a % of one core.
// Run: node idle-costs-child.js without|columns <window ms> <pid>,<pid>,…
import { hostname } from 'node:os';
import { createEngine } from '../src/engine/index.js';
import { localProbeProvider, type ProbeProvider } from '../src/os/provider.js';
import type { PidFacts, SessionEntry } from '../src/core/types.js';
import { fixedSource } from './fixed-source.js';

const mode = process.argv[2];
if (mode !== 'without' && mode !== 'columns') throw new Error(`idle-costs-child: without or columns, not ${mode}`);
const windowMs = Number(process.argv[3]);
const pids = process.argv[4]!.split(',').map(Number);
const HOST = hostname();
const now = Date.now();

const sessions: SessionEntry[] = pids.map((pid, i) => ({
  source: 'hypivisor',
  id: `019a3f2c-7b1e-7c00-8000-${i.toString(16).padStart(12, '0')}`,
  machine: HOST,
  cwd: `/home/dev/work/project-${i % 97}`,
  pid,
  status: 'active',
  registeredAt: now, // after the processes started (a process younger than its registration is a reused pid)
}));
const source = fixedSource(sessions);

const local = localProbeProvider(HOST);
const withoutReadings = (facts: PidFacts): PidFacts => {
  const { cpuMs: _cpu, rssBytes: _rss, ...rest } = facts;
  return rest;
};
const probes: ProbeProvider =
  mode === 'columns'
    ? local
    : {
        ...local,
        async probePids(list, opts) {
          const out = new Map<number, PidFacts>();
          for (const [pid, facts] of await local.probePids(list, opts)) out.set(pid, withoutReadings(facts));
          return out;
        },
      };

const engine = createEngine({ sources: [source], hostName: HOST, intervalScale: 1, readOnly: true, auditLogPath: '/dev/null', probes });
engine.start();
const settled = await engine.settled(60_000);
if (settled.counts.live !== pids.length) throw new Error(`idle-costs-child: not every agent live: ${JSON.stringify(settled.counts)}; ${JSON.stringify(settled.findings[0]?.evidence)}`);
const full0 = engine.stats().probes.full;
while (engine.stats().probes.full < full0 + 2) await new Promise((r) => setTimeout(r, 50));
const withUsage = engine.getSnapshot().findings.filter((f) => f.evidence.usage !== undefined).length;
const t0 = process.cpuUsage();
await new Promise((r) => setTimeout(r, windowMs));
const used = process.cpuUsage(t0);
process.stdout.write(`${JSON.stringify({ cpuPct: ((used.user + used.system) / 1000 / windowMs) * 100, withUsage })}\n`);
await engine.stop();
process.exit(0);
