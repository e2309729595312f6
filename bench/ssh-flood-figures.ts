// An ssh host pushing `+P` lines nonstop (issue 26), against the built CLI in a real tmux pane. Two
// hosts, each with AGENTS registered entries on real sleeps: calm-1 runs the real probe loop,
// flood-1 the same loop with a flooder beside it on the same stdout (a runaway watcher printing one
// true `+P` line of one of its pids over and over, one write a line). The ssh client is a stand-in
// that runs the remote command under this machine's sh (no sshd: the monitor's side is the same, it
// reads a pipe from a child), its PATH giving each host its own `hostname`.
//
// ssh_flood_idle_cpu_pct: the monitor process alone (utime + stime from /proc; its ssh children,
// the flooder among them, not counted) over WINDOW_MS, settled, before the flood.
// ssh_flood_cpu_pct: the same over the WINDOW_MS from the moment the flood starts (its detection
// inside). GHOSTWATCH_BENCH_BIN measures another build (`npm run bench:compare -- <rev> --only
// ssh-flood` does, for a before and after).
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ChildProcess } from 'node:child_process';
import type { RegistryServer } from '../src/server/index.js';
import { startRegistryServer } from '../src/server/index.js';
import { hasTmux, killAndReap } from './children.js';
import type { Figures } from './figures.js';
import { spawnMany } from './idle-figures.js';
import { cpuSeconds, sleep, tmuxServer, until } from './panes.js';
import { MEASURED_BIN as BIN, ROOT } from './paths.js';
import { openClient, registerNodes, type NodeParams, type WireClient } from './registrations.js';

const AGENTS = 20;
const WINDOW_MS = 10_000;
const COLUMNS = 120;
const ROWS = 60;
const HOSTS = ['calm-1', 'flood-1'] as const;

/** The ssh stand-in: the remote command under sh, `hostname` answering the destination; flood-* also floods while `<dir>/flood` exists. */
function writeSshStandIn(dir: string): void {
  const ssh = join(dir, 'ssh');
  writeFileSync(
    ssh,
    `#!/bin/sh
d='${dir}'
for a; do prev=$last; last=$a; done
mkdir -p "$d/as/$prev"
printf '#!/bin/sh\\necho %s\\n' "$prev" > "$d/as/$prev/hostname"
chmod +x "$d/as/$prev/hostname"
case $prev in flood*)
  (while [ ! -e "$d/flood" ]; do kill -0 $$ 2>/dev/null || exit 0; sleep 0.05; done
   l=$(cat "$d/flood")
   while [ -e "$d/flood" ]; do printf '%s\\n' "$l"; done) &
esac
PATH="$d/as/$prev:$PATH" exec sh -c "$last"
`,
  );
  chmodSync(ssh, 0o755);
}

/** A pid's start time as /proc/<pid>/stat field 22 (clock ticks since boot), as the probe loop prints it. */
function startTicks(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
}

export async function sshFloodFigures(): Promise<Figures> {
  if (process.platform !== 'linux' || !hasTmux() || !existsSync(join(ROOT, 'dist/src/cli/main.js'))) {
    process.stderr.write('bench: ssh-flood needs Linux, tmux and a built dist/: skipped\n');
    return {};
  }
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-ssh-flood-'));
  const panes = tmuxServer(`gw-bench-ssh-flood-${process.pid}`, COLUMNS, ROWS);
  const children: ChildProcess[] = [];
  let server: RegistryServer | undefined;
  let agents: WireClient | undefined;
  try {
    writeSshStandIn(dir);
    const pids = await spawnMany(AGENTS * HOSTS.length, children);
    server = await startRegistryServer({ port: 0, quiet: true, ttlSeconds: 3_600, limits: { nodesPerConnection: pids.length } });
    const nodes: NodeParams[] = pids.map((pid, i) => ({ id: `agent-${i}`, machine: HOSTS[i % HOSTS.length]!, cwd: `/home/dev/work/p-${i}`, port: 30_000 + i, pid }));
    agents = await openClient(server.url);
    await registerNodes(agents, nodes);

    const env = `env PATH='${dir}':"$PATH" XDG_STATE_HOME='${dir}' XDG_CONFIG_HOME='${join(dir, 'config')}' TERM=xterm-256color`;
    const ssh = HOSTS.map((h) => `--ssh ${h}=${h}`).join(' ');
    const gw = panes.newPane('gw', `exec ${env} node '${BIN}' --registry ${server.url} ${ssh}`);
    if (!readFileSync(`/proc/${gw}/cmdline`, 'utf8').includes('ghostwatch')) throw new Error(`pane pid ${gw} is not ghostwatch`);
    const all = nodes.length;
    await until(() => new RegExp(`\\b${all} live\\b`).test(panes.capture('gw')), 60_000, `${all} live rows over ssh`, 100).catch((error: unknown) => {
      throw new Error(`${error instanceof Error ? error.message : String(error)}; the pane shows:\n${panes.capture('gw')}`);
    });
    await sleep(3_000);

    const window = async (): Promise<number> => {
      const t0 = performance.now();
      const c0 = cpuSeconds(gw);
      await sleep(WINDOW_MS);
      return ((cpuSeconds(gw) - c0) * 1000) / (performance.now() - t0) * 100;
    };
    const idle = await window();
    const victim = pids[1]!; // flood-1's first agent
    writeFileSync(join(dir, 'flood'), `+P ${victim} ok S ${startTicks(victim)}`);
    const flooded = await window();
    const screen = panes.capture('gw');
    const unverified = new RegExp(`\\b${AGENTS} unverified\\b`).test(screen);
    process.stderr.write(`bench: ssh-flood: after ${WINDOW_MS / 1000} s of flood, flood-1's ${AGENTS} rows are ${unverified ? '' : 'not '}unverified\n`);
    rmSync(join(dir, 'flood'), { force: true });
    const round1 = (n: number) => Math.round(n * 10) / 10;
    return {
      ssh_flood_idle_cpu_pct: { value: round1(idle), unit: `% of a core (the monitor process, ${HOSTS.length} hosts × ${AGENTS} agents, settled)` },
      ssh_flood_cpu_pct: { value: round1(flooded), unit: `% of a core (the monitor process, ${WINDOW_MS / 1000} s from the start of a +P flood on one host)`, target: '<= 5' },
    };
  } finally {
    panes.close();
    agents?.close();
    await server?.close();
    await Promise.all(children.map(killAndReap));
    rmSync(dir, { recursive: true, force: true });
  }
}
