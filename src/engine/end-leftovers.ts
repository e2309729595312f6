// Ending a dead agent's leftovers (the K key, `reap --leftovers`): SIGTERM to each, then, after a
// grace, SIGKILL to those still there. Before each signal: core's rules again (never pid 1,
// ghostwatch, or another user's process unless root), the process is not now under a live agent
// (its parents read again) nor learned by one, the intent is written to the audit log, and its
// exact start is read again immediately before the kill: a recycled pid is never signalled.

import { randomUUID } from 'node:crypto';
import { identityKey, signalPlan, type Leftover, type Self } from '../core/leftovers.js';
import { sanitize } from '../core/sanitize.js';
import type { LeftoverProbes } from '../os/provider.js';
import type { Clock } from '../plumbing/clock.js';
import { auditError, type AuditLog } from './audit-log.js';

/** One leftover, and the agent whose it is. */
export interface LeftoverTarget {
  readonly leftover: Leftover;
  readonly agent: { readonly source: string; readonly id: string; readonly pid: number };
}

/**
 * ended: gone after SIGTERM; killed: gone after SIGKILL; already-gone: gone before any signal;
 * skipped: not signalled (another process now, under a live agent, cancelled); refused: a rule
 * forbids it; failed: the signal could not be sent or did not end it, or the audit log could not be written.
 */
export type LeftoverOutcome = 'ended' | 'killed' | 'already-gone' | 'skipped' | 'refused' | 'failed';

export interface LeftoverResult {
  readonly target: LeftoverTarget;
  readonly outcome: LeftoverOutcome;
  readonly detail?: string | undefined;
}

export interface LeftoverProgress {
  /** term: SIGTERM being sent; waiting: the grace runs; kill: SIGKILL being sent. */
  readonly phase: 'term' | 'waiting' | 'kill';
  /** Processes signalled and still there. */
  readonly left: number;
  readonly graceMs: number;
}

export interface EndLeftoversRequest {
  readonly selection: readonly LeftoverTarget[];
  /** SIGTERM to SIGKILL; default the engine's (5 s unless configured). */
  readonly graceMs?: number | undefined;
  readonly onProgress?: ((p: LeftoverProgress) => void) | undefined;
  /** Stops before the next SIGTERM, and skips the SIGKILL stage. */
  readonly signal?: AbortSignal | undefined;
}

export interface EndLeftoversSummary {
  readonly results: readonly LeftoverResult[];
  readonly counts: Readonly<Record<LeftoverOutcome, number>>;
}

export interface LeftoverEnderContext {
  readonly probes: LeftoverProbes | undefined;
  readonly audit: AuditLog;
  readonly actor: string;
  readonly host: string;
  readonly readOnly: boolean;
  readonly self: () => Self;
  readonly now: () => number;
  readonly clock: Pick<Clock, 'setTimeout' | 'monotonic'>;
  /** Pids of the agents alive now, and the processes live agents learned. */
  readonly live: () => { readonly agents: ReadonlySet<number>; readonly processes: ReadonlySet<string> };
}

export const DEFAULT_KILL_GRACE_MS = 5_000;
export const READ_ONLY_LEFTOVERS = 'read-only mode: no process is signalled';
/** How often the grace checks whether they are gone. */
const POLL_MS = 50;
/** How long a SIGKILLed process gets to be gone before it is reported still there. */
const KILL_WAIT_MS = 2_000;

export async function endLeftovers(ctx: LeftoverEnderContext, request: EndLeftoversRequest, defaultGraceMs: number): Promise<EndLeftoversSummary> {
  const results: LeftoverResult[] = [];
  const probes = ctx.probes;
  if (ctx.readOnly || !probes) {
    const why = ctx.readOnly ? READ_ONLY_LEFTOVERS : 'the processes agents started cannot be read or signalled on this system';
    return summary(request.selection.map((target) => ({ target, outcome: 'failed', detail: why })));
  }
  const graceMs = Math.max(0, request.graceMs ?? defaultGraceMs);
  const self = ctx.self();
  const plan = signalPlan(request.selection, self);
  for (const r of plan.refused) results.push({ target: r.target, outcome: 'refused', detail: r.why });
  const cancelled = () => request.signal?.aborted === true;
  const report = (p: LeftoverProgress) => {
    try {
      request.onProgress?.(p);
    } catch {
      // a broken display must not stop the run half-way through its audit trail
    }
  };

  const signalled: { target: LeftoverTarget; id: string }[] = [];
  for (const target of plan.send) {
    if (cancelled()) {
      results.push({ target, outcome: 'skipped', detail: 'cancelled before it was signalled' });
      continue;
    }
    report({ phase: 'term', left: signalled.length, graceMs });
    const sent = await signalOne(ctx, probes, target, 'SIGTERM');
    if (sent.outcome === 'sent') signalled.push({ target, id: sent.id });
    else results.push({ target, outcome: sent.outcome, detail: sent.detail });
  }

  // The grace: until every one signalled is gone, or it runs out.
  const started = ctx.clock.monotonic();
  const stillThere = () => signalled.filter((s) => probes.checkSame(s.target.leftover).same);
  let left = stillThere();
  while (left.length > 0 && ctx.clock.monotonic() - started < graceMs && !cancelled()) {
    report({ phase: 'waiting', left: left.length, graceMs });
    await wait(ctx.clock, POLL_MS);
    left = stillThere();
  }
  for (const s of signalled) {
    if (left.includes(s)) continue;
    const detail = `gone after SIGTERM`;
    await tryAppend(ctx, { ts: iso(ctx), kind: 'outcome', id: s.id, outcome: 'ended', detail });
    results.push({ target: s.target, outcome: 'ended', detail });
  }

  const killed: { target: LeftoverTarget; id: string }[] = [];
  for (const s of left) {
    if (cancelled()) {
      results.push({ target: s.target, outcome: 'skipped', detail: 'cancelled after SIGTERM: still running, no SIGKILL sent' });
      continue;
    }
    report({ phase: 'kill', left: left.length, graceMs });
    const sent = await signalOne(ctx, probes, s.target, 'SIGKILL');
    if (sent.outcome === 'sent') killed.push({ target: s.target, id: sent.id });
    else results.push({ target: s.target, outcome: sent.outcome === 'already-gone' ? 'ended' : sent.outcome, detail: sent.detail });
  }
  const killedAt = ctx.clock.monotonic();
  while (killed.some((k) => probes.checkSame(k.target.leftover).same) && ctx.clock.monotonic() - killedAt < KILL_WAIT_MS) await wait(ctx.clock, POLL_MS);
  for (const k of killed) {
    const gone = !probes.checkSame(k.target.leftover).same;
    const detail = gone ? `still running ${Math.round(graceMs / 100) / 10} s after SIGTERM; gone after SIGKILL` : 'SIGKILL sent, and it is still there (uninterruptible?)';
    await tryAppend(ctx, { ts: iso(ctx), kind: 'outcome', id: k.id, outcome: gone ? 'killed' : 'failed', detail });
    results.push({ target: k.target, outcome: gone ? 'killed' : 'failed', detail });
  }
  const order = new Map(request.selection.map((t, i) => [identityKey(t.leftover), i]));
  results.sort((a, b) => (order.get(identityKey(a.target.leftover)) ?? 0) - (order.get(identityKey(b.target.leftover)) ?? 0));
  return summary(results);
}

type SignalOutcome = { outcome: 'sent'; id: string } | { outcome: Exclude<LeftoverOutcome, 'ended' | 'killed'>; detail: string };

/** The checks, the intent line, the signal to the same process only, the outcome line. */
async function signalOne(ctx: LeftoverEnderContext, probes: LeftoverProbes, target: LeftoverTarget, signal: 'SIGTERM' | 'SIGKILL'): Promise<SignalOutcome> {
  const l = target.leftover;
  const live = ctx.live();
  const under = probes.ancestors(l.pid).find((p) => live.agents.has(p));
  if (under !== undefined) return { outcome: 'skipped', detail: `pid ${l.pid} now runs under the live agent pid ${under}: not signalled` };
  if (live.processes.has(identityKey(l))) return { outcome: 'skipped', detail: `pid ${l.pid} was started by a live agent too: not signalled` };
  const before = probes.checkSame(l);
  if (!before.same) return { outcome: before.why === 'gone' ? 'already-gone' : before.why === 'changed' ? 'skipped' : 'failed', detail: before.why === 'changed' ? `${before.detail}: not signalled` : before.detail };
  const id = randomUUID();
  const intent = {
    ts: iso(ctx),
    kind: 'intent',
    id,
    actor: ctx.actor,
    host: ctx.host,
    action: { type: 'signal', signal, pid: l.pid, startTicks: l.startTicks ?? null, startedAt: l.startedAt ?? null },
    reason: `a process the dead agent ${sanitize(target.agent.id, 120)} (pid ${target.agent.pid}) started, still running`,
    agent: target.agent,
    process: { pid: l.pid, ppid: l.ppid, name: l.name, cmd: l.cmd, uid: l.uid ?? null, user: l.user ?? null, otherUser: l.otherUser, ports: l.ports ?? [], state: l.state },
  };
  try {
    await ctx.audit.append(intent);
  } catch (err) {
    return { outcome: 'failed', detail: `cannot write the audit log (${ctx.audit.path}): ${auditError(err)}; not signalled` };
  }
  // The exact start is read again right here, immediately before the kill (signalIfSame).
  const r = probes.signal(l, signal);
  const outcome: SignalOutcome = r.sent ? { outcome: 'sent', id } : { outcome: r.why === 'gone' ? 'already-gone' : r.why === 'changed' ? 'skipped' : 'failed', detail: r.why === 'changed' ? `${r.detail}: not signalled` : r.detail };
  const unaudited = await tryAppend(ctx, { ts: iso(ctx), kind: 'outcome', id, outcome: r.sent ? 'signalled' : outcome.outcome, ...(r.sent ? { detail: `${signal} sent` } : { detail: r.detail }) });
  if (unaudited && outcome.outcome !== 'sent') return { ...outcome, detail: `${outcome.detail} (${unaudited})` };
  return outcome;
}

async function tryAppend(ctx: LeftoverEnderContext, record: Readonly<Record<string, unknown>>): Promise<string | undefined> {
  try {
    await ctx.audit.append(record);
    return undefined;
  } catch (err) {
    return `not written to the audit log (${ctx.audit.path}): ${auditError(err)}`;
  }
}

const wait = (clock: Pick<Clock, 'setTimeout'>, ms: number): Promise<void> => new Promise((resolve) => clock.setTimeout(resolve, ms));

const iso = (ctx: LeftoverEnderContext): string => new Date(ctx.now()).toISOString();

function summary(results: LeftoverResult[]): EndLeftoversSummary {
  const counts: Record<LeftoverOutcome, number> = { ended: 0, killed: 0, 'already-gone': 0, skipped: 0, refused: 0, failed: 0 };
  for (const r of results) counts[r.outcome]++;
  return { results, counts };
}

/** One line for a run: "ended 2 (1 after SIGKILL); 1 skipped: pid 123 is now another process". */
export function leftoverSummaryText(s: EndLeftoversSummary): { text: string; tone: 'info' | 'warn' | 'error' } {
  const c = s.counts;
  const done = c.ended + c.killed;
  const parts = [`ended ${done} leftover${done === 1 ? '' : 's'}${c.killed > 0 ? ` (${c.killed} after SIGKILL)` : ''}`];
  if (c['already-gone'] > 0) parts.push(`${c['already-gone']} already gone`);
  const bad = s.results.filter((r) => r.outcome === 'skipped' || r.outcome === 'refused' || r.outcome === 'failed');
  for (const r of bad.slice(0, 2)) parts.push(`${r.outcome}: ${sanitize(r.detail ?? '', 160)}`);
  if (bad.length > 2) parts.push(`${bad.length - 2} more not ended`);
  return { text: parts.join('; '), tone: c.failed > 0 ? 'error' : bad.length > 0 ? 'warn' : 'info' };
}
