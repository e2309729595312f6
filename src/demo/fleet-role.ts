// The `host` role: the one agent process `ghostwatch demo --fleet` starts inside each fake host
// (src/demo/fleet.ts). It sees the host's hostname and pids, so everything it registers carries
// that machine's name and that host's pids, as agents running there would:
//   live      itself: its own pid, start time and TCP endpoint
//   ghost     a `sleep` it registered, then SIGKILLed and reaped; the row stays active
//   zombie    a child's child that exited and is never reaped
//   pending   `pending-<pid>` of a child that died before it resolved (a straggler)
// From this host none of them can be checked (other pids, another hostname): only ssh to the
// fake host tells the truth about them.
import { spawn, type ChildProcess } from 'node:child_process';
import { killAndReap, listenTcp, type AgentContext } from './agent-context.js';
import { childEnv } from './child-env.js';
import { demoCwd, demoId } from './identity.js';
import { RegistryLink } from './registry-link.js';
import { stageZombie } from './zombie.js';

export async function runHostCast(ctx: AgentContext): Promise<void> {
  const children = new Set<ChildProcess>();
  ctx.onStop(() => {
    for (const c of children) c.kill('SIGKILL');
  });

  /** Register one entry for `pid` on a connection of its own, with a port reserved for it. */
  const hold = async (id: string, pid: number, startedAt: number, project: string): Promise<void> => {
    const reserved = await listenTcp();
    ctx.onStop(() => reserved.close());
    const link = await RegistryLink.open(ctx.url);
    ctx.onStop(() => link.close());
    await link.register({ id, machine: ctx.machine, cwd: demoCwd(project), port: reserved.port, status: 'active', pid, pid_started_at: startedAt });
    link.startHeartbeat();
    link.onRemoved(() => {
      if (!ctx.stopping) ctx.report('removed', `${id} on ${ctx.machine} was removed from the registry (evicted)`);
    });
  };

  /** A `sleep` registered under `id`, then SIGKILLed and reaped: its pid is gone on this host. */
  const stageDead = async (idFor: (pid: number) => string, project: string): Promise<string> => {
    const startedAt = Date.now();
    const child = spawn('sleep', ['3600'], { stdio: 'ignore', env: childEnv(ctx.env) });
    children.add(child);
    await new Promise<void>((resolve, reject) => child.once('spawn', resolve).once('error', reject));
    const pid = child.pid as number;
    const id = idFor(pid);
    try {
      await hold(id, pid, startedAt, project);
    } finally {
      await killAndReap(child);
      children.delete(child);
    }
    return `${id} pid ${pid}`;
  };

  const live = await listenTcp();
  ctx.onStop(() => live.close());
  const link = await RegistryLink.open(ctx.url);
  ctx.onStop(() => link.close());
  const liveId = demoId(`fleet:${ctx.machine}:live`);
  await link.register({ id: liveId, machine: ctx.machine, cwd: demoCwd(ctx.name), port: live.port, status: 'active', pid: process.pid, pid_started_at: ctx.startedAt });
  link.startHeartbeat();
  ctx.report('registered', `live on ${ctx.machine}: ${liveId} pid ${process.pid} port ${live.port}`);

  const ghost = await stageDead(() => demoId(`fleet:${ctx.machine}:ghost`), `${ctx.name}-nightly`);
  ctx.report('ghost', `ghost on ${ctx.machine}: ${ghost} SIGKILLed and reaped; its row stays active`);

  const pending = await stageDead((pid) => `pending-${pid}`, `${ctx.name}-hotfix`);
  ctx.report('registered', `pending straggler on ${ctx.machine}: ${pending}, died before it resolved`);

  const zombie = await stageZombie();
  children.add(zombie.parent);
  const zombieId = demoId(`fleet:${ctx.machine}:zombie`);
  await hold(zombieId, zombie.pid, zombie.startedAt, `${ctx.name}-tools`);
  ctx.report('zombie', `zombie on ${ctx.machine}: ${zombieId} pid ${zombie.pid}, defunct; its parent ${zombie.parent.pid} never reaps it`);
}
