// Run inside a pid namespace of its own (`unshare --fork --pid --mount-proc node this.mjs DIR`,
// as root), where /proc/sys/kernel/ns_last_pid can be wound back without touching the machine's
// other processes: a leftover is listed (read as the K dialog shows it), it dies, and a new process
// is started on its very pid before the person confirms. The built executor must not signal that
// new process and must say why. Prints one JSON line with what happened.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
const root = new URL('../../dist/src/', import.meta.url);
const { readProcess } = await import(new URL('os/process-tree.js', root).href);
const { localLeftoverProbes } = await import(new URL('os/provider.js', root).href);
const { endLeftovers } = await import(new URL('engine/end-leftovers.js', root).href);
const { AuditLog } = await import(new URL('engine/audit-log.js', root).href);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const start = async () => {
  const child = spawn('sleep', ['300'], { stdio: 'ignore' });
  await once(child, 'spawn');
  return child;
};

// The leftover, as the dialog listed it.
const first = await start();
const listed = readProcess(first.pid);
const target = { leftover: { ...listed, agentPid: 999, otherUser: false, ports: [] }, agent: { source: 'fake', id: 'gone-agent', pid: 999 } };

// Between the dialog and the signal: it dies, and its pid is handed out again.
first.kill('SIGKILL');
await once(first, 'exit');
// Start times count in clock ticks (10 ms): a new process in the same tick would read the same.
await sleep(50);
let second;
for (let attempt = 0; attempt < 50 && second === undefined; attempt++) {
  writeFileSync('/proc/sys/kernel/ns_last_pid', String(first.pid - 1));
  const child = await start();
  if (child.pid === first.pid) second = child;
  else {
    child.kill('SIGKILL');
    await once(child, 'exit');
    await sleep(5);
  }
}
if (second === undefined) {
  process.stdout.write(`${JSON.stringify({ error: `pid ${first.pid} could not be handed out again` })}\n`);
  process.exit(1);
}
const reused = readProcess(second.pid);

const auditPath = join(dir, 'evictions.jsonl');
const ctx = {
  probes: localLeftoverProbes(),
  audit: new AuditLog(auditPath),
  actor: 'test',
  host: 'arena',
  readOnly: false,
  self: () => ({ uid: process.getuid(), root: process.getuid() === 0, pids: new Set([process.pid]) }),
  now: Date.now,
  clock: { setTimeout: (fn, ms) => setTimeout(fn, ms), monotonic: () => performance.now() },
  live: () => ({ agents: new Set(), processes: new Set() }),
};
const summary = await endLeftovers(ctx, { selection: [target] }, 500);
let stillAlive = true;
try {
  process.kill(second.pid, 0);
} catch {
  stillAlive = false;
}
let audit = '';
try {
  audit = readFileSync(auditPath, 'utf8');
} catch {
  // nothing written
}
process.stdout.write(
  `${JSON.stringify({
    pid: first.pid,
    listedStart: listed.startTicks,
    reusedStart: reused.startTicks,
    reusedPid: second.pid,
    results: summary.results.map((r) => ({ pid: r.target.leftover.pid, outcome: r.outcome, detail: r.detail })),
    stillAlive,
    signalledBy: second.signalCode,
    audit,
  })}\n`,
);
second.kill('SIGKILL');
process.exit(0);
