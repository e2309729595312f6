// The roles of the cast that register their own process, each the way pi-socket does: a TCP
// endpoint of its own, a WebSocket to the registry, `register` with its own pid and start time,
// ping frames as heartbeats. What each one does differently is what earns it its verdict.
import { listenTcp, sleep, untilNextSecond, type AgentContext, type Listener } from './agent-context.js';
import { demoCwd, demoId } from './identity.js';
import { RegistryLink, type DemoNode } from './registry-link.js';
import { ENV_RESOLVE_AFTER_MS } from './reports.js';

/** An hour: how far before its real start a `reused` entry says its process started. */
const REUSE_SHIFT_MS = 60 * 60 * 1000;
/** A pending agent resolves well inside the default pending TTL (120 s), so it reads "resolving". */
const RESOLVE_AFTER_MS = 90_000;
/** Below the demo registry's TTL (600 s): the offline row is refreshed before the sweep takes it. */
const OFFLINE_REFRESH_MS = 300_000;

async function endpoint(ctx: AgentContext): Promise<Listener> {
  const listener = await listenTcp();
  ctx.onStop(() => listener.close());
  return listener;
}

async function link(ctx: AgentContext): Promise<RegistryLink> {
  const l = await RegistryLink.open(ctx.url);
  ctx.onStop(() => l.close());
  return l;
}

function ownNode(ctx: AgentContext, id: string, port: number, startedAt = ctx.startedAt): DemoNode {
  return { id, machine: ctx.machine, cwd: demoCwd(ctx.name), port, status: 'active', pid: process.pid, pid_started_at: startedAt };
}

function watchRemoval(ctx: AgentContext, l: RegistryLink): void {
  l.onRemoved(() => {
    if (!ctx.stopping) ctx.report('removed', `${l.registeredId ?? '?'} was removed from the registry (evicted); the process keeps running`);
  });
}

/** `live`: a healthy agent. With `claim`, it also holds a claim on its working directory: `held`. */
export async function runLive(ctx: AgentContext, opts: { claim: boolean }): Promise<void> {
  const { port } = await endpoint(ctx);
  const l = await link(ctx);
  const id = demoId(`live:${ctx.name}`);
  await l.register(ownNode(ctx, id, port));
  l.startHeartbeat();
  watchRemoval(ctx, l);
  ctx.report('registered', `live: ${id} pid ${process.pid} port ${port}`);
  if (opts.claim) {
    await l.claim(demoCwd(ctx.name));
    ctx.report('claimed', `held: ${id} claims ${demoCwd(ctx.name)}`);
  }
}

/**
 * `reused`: a live process whose entry says it started an hour before it really did, which is
 * what a registration made by an earlier process that had the same pid looks like. This is how
 * the demo stages pid reuse: recycling a pid on demand is not practical.
 */
export async function runReused(ctx: AgentContext): Promise<void> {
  const { port } = await endpoint(ctx);
  const l = await link(ctx);
  const id = demoId(`reused:${ctx.name}`);
  await l.register(ownNode(ctx, id, port, ctx.startedAt - REUSE_SHIFT_MS));
  l.startHeartbeat();
  watchRemoval(ctx, l);
  ctx.report('registered', `reused: ${id} pid ${process.pid} port ${port} registered with a start time 1h before its real one`);
}

/**
 * `superseded`: one process that restarted its session: it registered under id A, then under id B
 * on a second connection and a new port (which defeats the machine:port rule), and both
 * connections stay open. The registry's clock has seconds only, so B waits for the next second:
 * then B's `registered_at` is newer, and A is the superseded one.
 */
export async function runSuperseded(ctx: AgentContext): Promise<void> {
  const first = await endpoint(ctx);
  const a = await link(ctx);
  const idA = demoId(`superseded:${ctx.name}:old`);
  await a.register(ownNode(ctx, idA, first.port));
  a.startHeartbeat();
  watchRemoval(ctx, a);
  await sleep(untilNextSecond());
  const second = await endpoint(ctx);
  const b = await link(ctx);
  const idB = demoId(`superseded:${ctx.name}:new`);
  await b.register(ownNode(ctx, idB, second.port));
  b.startHeartbeat();
  watchRemoval(ctx, b);
  ctx.report('registered', `superseded: pid ${process.pid} registered ${idA} (port ${first.port}), then restarted its session as ${idB} (port ${second.port}); both connections stay open`);
}

/**
 * `pending-<pid>`, young: shown live and "resolving". After a while it resolves, as a real agent
 * does: it registers its real id on the same port, so the registry drops the placeholder. The
 * cast then starts the next pending agent and later stops this one, which deregisters on the way out.
 */
export async function runPending(ctx: AgentContext): Promise<void> {
  const { port } = await endpoint(ctx);
  const l = await link(ctx);
  const pendingId = `pending-${process.pid}`;
  await l.register(ownNode(ctx, pendingId, port));
  l.startHeartbeat();
  ctx.report('registered', `pending: ${pendingId} pid ${process.pid} port ${port}, resolving`);
  ctx.onStop(() => l.deregister().catch(() => {}));
  const after = Number(ctx.env[ENV_RESOLVE_AFTER_MS] ?? RESOLVE_AFTER_MS);
  const timer = setTimeout(() => {
    const id = demoId(`pending:${ctx.name}:${ctx.seq}`);
    l.register(ownNode(ctx, id, port)).then(
      () => {
        watchRemoval(ctx, l);
        ctx.report('resolved', `resolved ${pendingId} to ${id}`);
      },
      (error: Error) => ctx.report('error', `could not resolve ${pendingId}: ${error.message}`),
    );
  }, after);
  ctx.onStop(() => clearTimeout(timer));
}

/**
 * `offline`: registers, then closes its socket (the registry marks the node offline and keeps it
 * for its TTL). It registers and closes again every few minutes so the row outlives the sweep.
 */
export async function runOffline(ctx: AgentContext): Promise<void> {
  const { port } = await endpoint(ctx);
  const id = demoId(`offline:${ctx.name}`);
  const once = async (): Promise<void> => {
    const l = await RegistryLink.open(ctx.url);
    try {
      await l.register(ownNode(ctx, id, port));
    } finally {
      await l.close();
    }
  };
  await once();
  ctx.report('offline', `offline: ${id} pid ${process.pid} port ${port} registered and closed its connection`);
  const timer = setInterval(() => {
    if (!ctx.stopping) once().catch((error: Error) => ctx.report('error', `offline refresh: ${error.message}`));
  }, OFFLINE_REFRESH_MS);
  ctx.onStop(() => clearInterval(timer));
}
