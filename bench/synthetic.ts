// A deterministic, realistic-looking registry of N sessions and M claims, with OS facts that
// put entries in every verdict. Shared by the benches (and later the UI screenshots).
import type { ClaimEntry, OsFacts, PidFacts, PortFacts, RegistryView, SessionEntry } from '../src/core/index.js';

export const SYNTH_HOST = 'devbox';
export const SYNTH_NOW = 1_800_000_000_000;

/** Small LCG so runs are repeatable without Math.random. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

export function syntheticRegistry(sessions: number, claims: number, seed = 42): { view: RegistryView; facts: OsFacts } {
  const rand = rng(seed);
  const entries: SessionEntry[] = [];
  const pids = new Map<number, PidFacts>();
  const ports = new Map<number, PortFacts>();
  for (let i = 0; i < sessions; i++) {
    const roll = rand();
    const pid = 10_000 + i;
    const registeredAt = SYNTH_NOW - Math.floor(rand() * 86_400_000);
    const noPid = roll > 0.9 && roll <= 0.92;
    // Every 50th live entry shares its pid with the one before it: a superseded pair.
    const sharedPid = i % 50 === 1 ? pid - 1 : pid;
    // One literal per entry, as the adapters build them: objects made by spreading
    // ({...base, pid}) get maps V8 reads ~15x slower, which a bench must not measure.
    const entry: SessionEntry = {
      source: 'hypivisor',
      id: roll < 0.03 ? `pending-${pid}` : `s-${i.toString(36)}-${Math.floor(rand() * 1e9).toString(36)}`,
      machine: roll < 0.1 ? `node-${i % 17}` : SYNTH_HOST,
      cwd: `/home/dev/work/project-${i % 97}/packages/pkg-${i % 13}`,
      port: 20_000 + (i % 40_000),
      status: roll > 0.95 ? 'offline' : 'active',
      offline: roll > 0.95,
      lastSeen: SYNTH_NOW - Math.floor(rand() * 60_000),
      registeredAt,
      pid: noPid ? undefined : sharedPid,
    };
    entries.push(entry);
    if (noPid) {
      ports.set(entry.port as number, { port: entry.port as number, result: rand() < 0.5 ? 'open' : 'refused', checkedAt: SYNTH_NOW });
      continue;
    }
    const fate = rand();
    const facts: PidFacts =
      fate < 0.15
        ? { pid, kill: 'ESRCH', checkedAt: SYNTH_NOW }
        : {
            pid,
            kill: fate < 0.2 ? 'EPERM' : 'ok',
            state: fate < 0.22 ? 'Z' : 'S',
            startedAt: fate < 0.25 ? registeredAt + 600_000 : registeredAt - 2_000,
            checkedAt: SYNTH_NOW,
            process: { pid, ppid: 1, name: 'node', cmd: `node /usr/lib/node_modules/pi/cli.js --session ${i}` },
          };
    pids.set(pid, facts);
  }
  const claimList: ClaimEntry[] = [];
  for (let i = 0; i < claims; i++) {
    const holder = entries[Math.floor(rand() * entries.length)];
    claimList.push({
      source: 'hypivisor',
      resource: `/home/dev/work/project-${i}`,
      holder: rand() < 0.1 ? `gone-${i}` : holder?.id,
      acquiredAt: SYNTH_NOW - 10_000,
    });
  }
  return { view: { sessions: entries, claims: claimList }, facts: { pids, ports } };
}
