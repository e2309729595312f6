// The eviction executor. One entry at a time, in plan order: re-probe and re-reconcile it, let
// core's recheck decide, write the intent to the audit log, and only then ask its source. The
// engine itself never signals a process; an eviction is a registry request, nothing else.

import { randomUUID } from 'node:crypto';
import { findingKey, planEviction, recheck, type PlannedEviction } from '../core/evict-plan.js';
import { sanitize } from '../core/sanitize.js';
import type { Finding } from '../core/types.js';
import { STATUS_TRAITS, type AlsoRemoved, type RegistryAnswer, type Source } from '../sources/types.js';
import { auditError, type AuditLog } from './audit-log.js';
import { freshFinding, type Fresh, type FreshContext } from './fresh-finding.js';
import { staleOf, type AlsoRemovedResult, type EvictProgress, type EvictRequest, type EvictResult, type EvictionOutcome, type EvictSummary } from './types.js';

export interface EvictorContext {
  readonly sources: readonly Source[];
  readonly host: string;
  readonly actor: string;
  readonly readOnly: boolean;
  readonly audit: AuditLog;
  readonly now: () => number;
  /** Policy and known facts as of this moment. */
  readonly freshContext: () => FreshContext;
  /** Facts read by the re-probe, for the live view. */
  readonly applyFresh: (fresh: Fresh) => void;
  readonly stopped: () => boolean;
  /** The findings shown when the run starts: the verdict and evidence of what a request removed besides. */
  readonly shown?: (() => readonly Finding[]) | undefined;
}

/** What a request of this run removed besides its own entry, by the key of the finding it was shown as. */
type RemovedBy = Map<string, { readonly by: Finding; readonly also: AlsoRemoved }>;

const keyOfAlso = (source: string, also: AlsoRemoved): string => findingKey({ kind: also.kind, source, id: also.key ?? also.id });

export const READ_ONLY_DETAIL = 'read-only mode: nothing is evicted';

export async function executeEviction(ctx: EvictorContext, request: EvictRequest): Promise<EvictSummary> {
  const report = progressReporter(request.onProgress);
  if (ctx.readOnly) {
    // Nothing is checked, written or sent; each selected row is told why.
    const all = planEviction(request.selection, { force: true }).send;
    const results = all.map((p, i): EvictResult => {
      report({ index: i + 1, total: all.length, finding: p.finding, phase: 'failed', detail: READ_ONLY_DETAIL });
      return { finding: p.finding, outcome: 'failed', detail: READ_ONLY_DETAIL, forced: p.forced };
    });
    return summary(results, []);
  }

  const plan = planEviction(request.selection, { force: request.force });
  const results: EvictResult[] = [];
  const removedBy: RemovedBy = new Map();
  // Read as the run starts: a request's reply refreshes the view before its side effects are written.
  const shownAtStart = new Map((ctx.shown?.() ?? []).map((f) => [findingKey(f), f]));
  const findingFor = (key: string): Finding | undefined => shownAtStart.get(key);
  const total = plan.send.length;
  const cancelled = () => request.signal?.aborted === true;
  for (let i = 0; i < total; i++) {
    if (cancelled()) return cancelRun(ctx, plan.send.slice(i), results, plan.needsForce, removedBy);
    const planned = plan.send[i]!;
    const at = { index: i + 1, total, finding: planned.finding };
    report({ ...at, phase: 'checking' });
    const done = await evictOne(ctx, planned, () => report({ ...at, phase: 'sending' }), cancelled, removedBy, findingFor);
    if (done === 'cancelled') return cancelRun(ctx, plan.send.slice(i), results, plan.needsForce, removedBy);
    const { outcome, detail } = done;
    for (const also of done.also ?? []) removedBy.set(keyOfAlso(planned.action.source, also), { by: planned.finding, also });
    results.push({ finding: planned.finding, outcome, detail, forced: planned.forced });
    report({ ...at, phase: outcome, detail });
  }
  return summary(results, plan.needsForce, removedBy, request.selection);
}

/**
 * The run stops between entries: what was handled stays as it is, the rest was never audited or
 * sent, and one `cancel` line in the audit log says which entries those are.
 */
async function cancelRun(
  ctx: EvictorContext,
  rest: readonly PlannedEviction[],
  results: readonly EvictResult[],
  needsForce: readonly Finding[],
  removedBy: RemovedBy,
): Promise<EvictSummary> {
  const record = {
    ts: isoNow(ctx),
    kind: 'cancel',
    id: randomUUID(),
    actor: ctx.actor,
    host: ctx.host,
    detail: `cancelled after ${results.length} of ${results.length + rest.length}; ${rest.length} not sent`,
    notSent: rest.map((p) => p.action),
  };
  // The summary says what was not sent whether or not the line could be written.
  await tryAppend(ctx, record);
  return { ...summary(results, needsForce, removedBy, [...results.map((r) => r.finding), ...rest.map((p) => p.finding)]), notSent: rest.map((p) => p.finding) };
}

/** What became of one entry, with its one-line detail. */
interface EntryOutcome {
  readonly outcome: EvictionOutcome;
  readonly detail?: string | undefined;
  /** What the request removed besides (audited already). */
  readonly also?: readonly AlsoRemoved[] | undefined;
}

/** 'cancelled': the run was cancelled before anything of this entry was audited or sent. */
async function evictOne(
  ctx: EvictorContext,
  planned: PlannedEviction,
  sending: () => void,
  cancelled: () => boolean,
  removedBy: RemovedBy,
  findingFor: (key: string) => Finding | undefined,
): Promise<EntryOutcome | 'cancelled'> {
  if (ctx.stopped()) return { outcome: 'failed', detail: 'ghostwatch stopped before it was sent' };
  const source = ctx.sources.find((s) => s.name === planned.action.source);
  if (!source) return { outcome: 'failed', detail: `no source named ${planned.action.source}` };
  // An earlier request of this run took it with it (agentctl's prune): that request removed it,
  // and its also-removed line in the audit log says so. Nothing more is sent for it.
  const earlier = removedBy.get(findingKey(planned.finding));
  if (earlier) {
    return { outcome: 'evicted', detail: `removed by the request sent for ${sanitize(earlier.by.id, 60)} (${earlier.also.change}; audited there as also-removed)` };
  }

  // A row of a source that is not reading is the last known, not the registry's view now: never
  // sent, forced or not. One chosen while stale is not sent either: the person chose what was stale.
  const state = source.snapshot().state;
  const stale = staleOf(planned.finding);
  if (!STATUS_TRAITS[state.status].reading || stale) {
    const why = STATUS_TRAITS[state.status].reading ? 'it was chosen while stale; look at it again' : `${source.name} is not connected (${state.cause ?? state.lastError ?? state.status})`;
    return { outcome: 'skipped', detail: `stale: ${why}; nothing was sent` };
  }

  const support = state.eviction;
  if (support && !support.available) return { outcome: 'failed', detail: `${source.name} cannot evict now: ${support.why ?? 'unavailable'}` };

  let fresh: Fresh;
  try {
    fresh = await freshFinding(source, planned.finding, ctx.freshContext());
  } catch (err) {
    return { outcome: 'failed', detail: `the re-check failed, so nothing was sent: ${auditError(err)}` };
  }
  ctx.applyFresh(fresh);
  const current = fresh.current;
  const verdict = recheck(planned, current);
  // An entry of a host verified over ssh: the audit line says which host its facts came from, and how.
  const ssh = planned.finding.evidence?.host?.ssh;
  const base = {
    actor: ctx.actor,
    host: ctx.host,
    ...(ssh !== undefined ? { via: `ssh ${sanitize(ssh.host, 64)}`, remoteHost: ssh.host, transport: 'ssh' } : {}),
    action: planned.action,
    forced: planned.forced,
  };

  if (!verdict.send) {
    const detail = skipDetail(verdict.why, planned.finding, current);
    const record = {
      ts: isoNow(ctx),
      kind: 'skip',
      id: randomUUID(),
      ...base,
      outcome: verdict.outcome,
      detail,
      planned: { verdict: planned.finding.verdict, reason: planned.finding.reason },
      verdict: current?.verdict ?? null,
      reason: current?.reason ?? null,
      evidence: current?.evidence ?? null,
      entry: rawEntry(current ?? planned.finding),
    };
    const unaudited = await tryAppend(ctx, record);
    return { outcome: verdict.outcome, detail: unaudited ? `${detail} (${unaudited})` : detail };
  }

  // A cancel that came during the re-check: nothing of this entry is written or sent.
  if (cancelled()) return 'cancelled';
  // The rechecked finding carries the evidence of this very moment: that is what gets audited.
  const finding = current ?? planned.finding;
  const id = randomUUID();
  const intent = {
    ts: isoNow(ctx),
    kind: 'intent',
    id,
    ...base,
    verdict: finding.verdict,
    reason: finding.reason,
    evidence: finding.evidence,
    entry: rawEntry(finding),
  };
  try {
    await ctx.audit.append(intent);
  } catch (err) {
    return { outcome: 'failed', detail: `cannot write the audit log (${ctx.audit.path}): ${auditError(err)}` };
  }

  sending();
  let answer: RegistryAnswer;
  try {
    answer = await source.evict(planned.action);
  } catch (err) {
    answer = { outcome: 'failed', error: auditError(err) };
  }
  const done = entryOutcomeOf(answer);
  let unaudited = await tryAppend(ctx, { ts: isoNow(ctx), kind: 'outcome', id, outcome: done.outcome, detail: done.detail });
  // What the registry removed along with it (agentctl prunes every dead record at once, whether
  // it removed this one, kept it, or its answer never came) is recorded in full too, with the
  // verdict and evidence it was shown with: nothing removed is lost, even what was not selected.
  const also = answer.outcome === 'already-gone' ? [] : (answer.alsoRemoved ?? []);
  for (const a of also) {
    const shown = findingFor(keyOfAlso(source.name, a));
    unaudited ??= await tryAppend(ctx, {
      ts: isoNow(ctx),
      kind: 'also-removed',
      id,
      source: source.name,
      removed: a.kind,
      removedId: a.id,
      ...(a.key !== undefined ? { claim: a.key } : {}),
      change: a.change,
      verdict: shown?.verdict ?? null,
      reason: shown?.reason ?? null,
      evidence: shown?.evidence ?? null,
      entry: a.raw,
      ...(a.after !== undefined ? { after: a.after } : {}),
    });
  }
  const result = unaudited ? { outcome: done.outcome, detail: done.detail ? `${done.detail} (${unaudited})` : unaudited } : done;
  return also.length > 0 ? { ...result, also } : result;
}

function entryOutcomeOf(answer: RegistryAnswer): EntryOutcome {
  if (answer.outcome === 'already-gone') return { outcome: 'already-gone', detail: answer.detail ?? 'the registry no longer had it' };
  const n = answer.alsoRemoved?.length ?? 0;
  const also = n > 0 ? `the registry also removed ${n} other dead record${n === 1 ? '' : 's'}` : undefined;
  const detail = [answer.outcome === 'evicted' ? answer.detail : answer.error, also].filter(Boolean).join('; ');
  return detail ? { outcome: answer.outcome, detail } : { outcome: answer.outcome };
}

/**
 * recheck names an identity change before a verdict change ("pid 123 is now 456"); say what the
 * entry is now as well, so the person reads "it is now live", not just that something moved.
 */
function skipDetail(why: string, before: Finding, current: Finding | undefined): string {
  if (current && current.verdict !== before.verdict && !why.startsWith('it is now')) {
    return `${why}; it is now ${current.verdict} (was ${before.verdict}): ${current.reason}`;
  }
  return why;
}

/** An append that must not stop anything (skips and outcomes): the failure, as text, or undefined. */
async function tryAppend(ctx: EvictorContext, record: Readonly<Record<string, unknown>>): Promise<string | undefined> {
  try {
    await ctx.audit.append(record);
    return undefined;
  } catch (err) {
    return `not written to the audit log (${ctx.audit.path}): ${auditError(err)}`;
  }
}

function rawEntry(f: Finding): unknown {
  return f.entry.raw ?? f.entry;
}

function isoNow(ctx: EvictorContext): string {
  return new Date(ctx.now()).toISOString();
}

function progressReporter(onProgress: EvictRequest['onProgress']): (p: EvictProgress) => void {
  return (p) => {
    try {
      onProgress?.(p);
    } catch {
      // A broken progress display must not stop an eviction half-way through its audit trail.
    }
  };
}

function summary(results: readonly EvictResult[], needsForce: readonly Finding[], removedBy?: RemovedBy, selection: readonly Finding[] = []): EvictSummary {
  const counts: Record<EvictionOutcome, number> = { evicted: 0, 'already-gone': 0, skipped: 0, refused: 0, failed: 0 };
  for (const r of results) counts[r.outcome]++;
  if (!removedBy || removedBy.size === 0) return { results, counts, needsForce };
  const selected = new Set(selection.map(findingKey));
  const alsoRemoved = [...removedBy].map(([key, { by, also }]): AlsoRemovedResult => {
    const raw = also.raw as { pid?: unknown } | undefined;
    return { source: by.source, kind: also.kind, id: also.id, pid: raw?.pid, change: also.change, by, selected: selected.has(key) };
  });
  return { results, counts, needsForce, alsoRemoved };
}
