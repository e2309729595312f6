// The supervisor role: one process that registers entries on behalf of other processes, which
// is how most of the registry's lies are born (protocols.md §1, "ghost factories"). It keeps
// every connection open, so the rows stay active while the processes behind them are gone:
//   ghost          a child it registered, then SIGKILLed and reaped
//   stale-claim    a claim held in the name of that ghost
//   pending        `pending-<pid>` of a child that died before it resolved
//   zombie         a child's child that exited and is never reaped
//   remote         a node it relays for another host
// and a new ghost about every 30 s, so eviction can be tried again and again.
import { spawn, type ChildProcess } from 'node:child_process';
import { killAndReap, listenTcp, type AgentContext, type Listener } from './agent-context.js';
import { demoCwd, demoId, GHOST_PROJECTS, REMOTE_CWD, REMOTE_MACHINE, REMOTE_PID, REMOTE_PORT } from './identity.js';
import { RegistryLink } from './registry-link.js';
import { ENV_GHOST_EVERY_MS } from './reports.js';
import { childEnv } from './child-env.js';
import { stageZombie } from './zombie.js';

const GHOST_EVERY_MS = 30_000;
/** Ghost rows alive at once: the oldest is deregistered first, so a demo left running stays small. */
export const MAX_GHOST_ROWS = 20;

/** One entry the supervisor holds open: its connection and the port reserved for it. */
interface Row {
  readonly id: string;
  readonly link: RegistryLink;
  readonly reserved: Listener;
  /** Let go of by the supervisor itself (retired, or shutting down): its removal is no news. */
  dropped: boolean;
}

export async function runSupervisor(ctx: AgentContext): Promise<void> {
  const rows = new Set<Row>();
  const ghosts: Row[] = [];
  const children = new Set<ChildProcess>();
  let claimHolder: Row | undefined;

  const drop = async (row: Row): Promise<void> => {
    row.dropped = true;
    rows.delete(row);
    const i = ghosts.indexOf(row);
    if (i !== -1) ghosts.splice(i, 1);
    if (claimHolder === row) claimHolder = undefined;
    await row.link.close();
    await row.reserved.close();
  };
  ctx.onStop(async () => {
    await Promise.all([...children].map((c) => killAndReap(c)));
    await Promise.all([...rows].map((r) => drop(r)));
  });

  /** Register one entry for `pid` on a connection of its own; removal by anyone closes it. */
  const hold = async (idFor: (port: number) => string, pid: number, startedAt: number, project: string): Promise<Row> => {
    const reserved = await listenTcp();
    let link: RegistryLink;
    try {
      link = await RegistryLink.open(ctx.url);
    } catch (error) {
      await reserved.close();
      throw error;
    }
    const row: Row = { id: idFor(reserved.port), link, reserved, dropped: false };
    rows.add(row);
    await link.register({ id: row.id, machine: ctx.machine, cwd: demoCwd(project), port: reserved.port, status: 'active', pid, pid_started_at: startedAt });
    link.startHeartbeat();
    link.onRemoved(() => {
      if (row.dropped || ctx.stopping) return;
      ctx.report('removed', `${row.id} was removed from the registry (evicted)`);
      void drop(row);
    });
    return row;
  };

  /** A child agent registered by the supervisor, then SIGKILLed and reaped: its pid is gone. */
  const stageDeadChild = async (project: string, idFor: (pid: number) => string): Promise<{ row: Row; pid: number }> => {
    const startedAt = Date.now();
    const child = spawn(process.execPath, [ctx.script, 'worker', project], { stdio: ['pipe', 'ignore', 'ignore'], env: childEnv(ctx.env) });
    children.add(child);
    try {
      await new Promise<void>((resolve, reject) => child.once('spawn', resolve).once('error', reject));
      const pid = child.pid as number;
      const row = await hold(() => idFor(pid), pid, startedAt, project);
      return { row, pid };
    } finally {
      await killAndReap(child);
      children.delete(child);
    }
  };

  let ghostSeq = 0;
  const stageGhost = async (): Promise<void> => {
    const seq = ghostSeq++;
    const project = GHOST_PROJECTS[seq % GHOST_PROJECTS.length]!;
    while (ghosts.length >= MAX_GHOST_ROWS) {
      const oldest = ghosts[0]!;
      oldest.dropped = true;
      await oldest.link.deregister().catch(() => {});
      await drop(oldest);
      ctx.report('removed', `retired the oldest ghost ${oldest.id} (at most ${MAX_GHOST_ROWS} ghost rows)`);
    }
    const { row, pid } = await stageDeadChild(project, () => demoId(`ghost:${seq}`));
    ghosts.push(row);
    ctx.report('ghost', `ghost: ${row.id} pid ${pid} (${project}) SIGKILLed and reaped; the supervisor keeps its row active`);
    if (claimHolder === undefined) {
      // Claimed while "alive", as the agent would have: its death leaves the claim stale.
      await row.link.claim(demoCwd(project));
      claimHolder = row;
      ctx.report('claimed', `stale-claim: ${demoCwd(project)} is held by the ghost ${row.id}`);
    }
  };

  // The remote node: relayed for another host, so nothing about it can be checked here.
  const remote = await RegistryLink.open(ctx.url);
  ctx.onStop(() => remote.close());
  const remoteId = demoId('remote:release-builds');
  await remote.register({ id: remoteId, machine: REMOTE_MACHINE, cwd: REMOTE_CWD, port: REMOTE_PORT, status: 'active', pid: REMOTE_PID });
  remote.startHeartbeat();
  ctx.report('registered', `remote: ${remoteId} on ${REMOTE_MACHINE}`);

  await stageGhost();

  const straggler = await stageDeadChild('etl-jobs', (pid) => `pending-${pid}`);
  ctx.report('registered', `pending straggler: ${straggler.row.id}, its process died before it resolved`);

  const zombie = await stageZombie();
  children.add(zombie.parent);
  zombie.parent.once('exit', () => {
    children.delete(zombie.parent);
    if (!ctx.stopping) ctx.report('error', `the zombie's parent (pid ${zombie.parent.pid}) exited: the zombie is gone`);
  });
  const zombieRow = await hold(() => demoId('zombie:cli-tools'), zombie.pid, zombie.startedAt, 'cli-tools');
  ctx.report('zombie', `zombie: ${zombieRow.id} pid ${zombie.pid}, defunct; its parent ${zombie.parent.pid} never reaps it`);

  const every = Number(ctx.env[ENV_GHOST_EVERY_MS] ?? GHOST_EVERY_MS);
  let busy = false;
  const timer = setInterval(() => {
    if (busy || ctx.stopping) return;
    busy = true;
    stageGhost()
      .catch((error: Error) => ctx.report('error', `new ghost: ${error.message}`))
      .finally(() => (busy = false));
  }, every);
  ctx.onStop(() => clearInterval(timer));
}
