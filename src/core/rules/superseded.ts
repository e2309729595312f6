// Rule: superseded. Of the entries of one source that share one live process, the newest
// registration stays and the older ones are superseded: by the pid they registered, or (for
// entries without a pid) by the process that serves their ports. It looks at the findings of all
// entries at once and returns amendments: new judgements and the siblings as evidence.

import { judgedPid } from './pid-domain.js';
import { sanitize } from '../sanitize.js';
import type { Evidence, Policy, SessionEntry, SessionFinding } from '../types.js';
import { judged, toLocal, type Judgement } from './judgement.js';

/** A change to one finding: a new judgement (or keep it) and evidence to add. */
export interface Amendment {
  /** Index of the finding in the list given to the rule. */
  readonly index: number;
  readonly judgement: Judgement | undefined;
  readonly evidence: Pick<Evidence, 'siblings' | 'siblingCount' | 'sharedBy' | 'newestBy' | 'alsoOpenIn'>;
}

const INDEX_BITS = 2 ** 21;

/** Of the live entries of one source that share one pid, all but the newest registration are superseded. */
export function supersededByPid(findings: readonly SessionFinding[], policy: Policy): Amendment[] {
  const out: Amendment[] = [];
  for (const group of groupsByPid(findings)) {
    for (const sameSource of splitBySource(group, findings)) supersede(sameSource, findings, policy, out);
  }
  return out;
}

/** Indices of the live entries with a usable pid, grouped by that pid: only groups of two or more. */
function groupsByPid(findings: readonly SessionFinding[]): number[][] {
  // The pid judged in this host's table: a record of another pid namespace is by its host pid.
  const pidOf = (f: SessionFinding): number | undefined => (f.verdict === 'live' ? judgedPid(f.entry, f.evidence) : undefined);
  const isCandidate = (f: SessionFinding): boolean => pidOf(f) !== undefined;
  const groups: number[][] = [];
  if (findings.length >= INDEX_BITS) {
    // Too big to pack an index (over two million entries): a map.
    const byPid = new Map<number, number[]>();
    findings.forEach((f, i) => {
      if (!isCandidate(f)) return;
      const pid = pidOf(f) as number;
      const list = byPid.get(pid);
      if (list) list.push(i);
      else byPid.set(pid, [i]);
    });
    for (const g of byPid.values()) if (g.length > 1) groups.push(g);
    return groups;
  }
  // Shared pids are rare: sort (pid, index) pairs packed into one float, then look at neighbours.
  // No per-entry allocation, unlike a Map of 10,000 pids. pid < 2^31 and index < 2^21 fit in 2^53.
  const keys = new Float64Array(findings.length);
  let n = 0;
  for (let i = 0; i < findings.length; i++) {
    const f = findings[i]!;
    const pid = pidOf(f);
    if (pid !== undefined) keys[n++] = pid * INDEX_BITS + i;
  }
  const sorted = keys.subarray(0, n).sort();
  for (let start = 0; start < n; ) {
    const pid = Math.floor(sorted[start]! / INDEX_BITS);
    let end = start + 1;
    while (end < n && Math.floor(sorted[end]! / INDEX_BITS) === pid) end++;
    if (end - start > 1) {
      const group: number[] = [];
      for (let k = start; k < end; k++) group.push(sorted[k]! % INDEX_BITS);
      groups.push(group);
    }
    start = end;
  }
  return groups;
}

/** Which host's pids a finding's pid is: '' for this host, the ssh host's machine for a remote one (pid 1234 there is not pid 1234 here). */
function pidSpace(f: SessionFinding): string {
  const ssh = f.evidence.host.ssh;
  return ssh === undefined ? '' : ssh.host;
}

/** One group per source and host: only entries of one registry on one host can share a process. */
function splitBySource(group: readonly number[], findings: readonly SessionFinding[]): number[][] {
  const bySource = new Map<string, number[]>();
  for (const i of group) {
    const f = findings[i]!;
    const source = f.evidence.host.ssh === undefined ? f.source : `${f.source}\u0000${pidSpace(f)}`;
    const list = bySource.get(source);
    if (list) list.push(i);
    else bySource.set(source, [i]);
  }
  return [...bySource.values()].filter((g) => g.length > 1);
}

/** Evidence lists at most this many siblings, reasons name at most NAMED: hundreds of entries
 * on one pid (a registry gone wrong) must not make the rule quadratic in time or in text. */
const MAX_SIBLINGS = 20;
const NAMED = 3;

function someIds(group: readonly SessionFinding[], except: SessionFinding | undefined, max: number): string[] {
  const out: string[] = [];
  for (const g of group) {
    if (g === except) continue;
    out.push(g.id);
    if (out.length === max) break;
  }
  return out;
}

function nameSome(group: readonly SessionFinding[], except: SessionFinding | undefined): string {
  const total = group.length - (except ? 1 : 0);
  const named = someIds(group, except, NAMED).map((s) => sanitize(s, 40)).join(', ');
  return total > NAMED ? `${named} and ${total - NAMED} more` : named;
}

/**
 * What a group's members share, made once per group: a 10,000-entry registry whose agents share
 * a few hundred processes must not make a sibling list, an evidence object and a text per entry.
 * A member past the first MAX_SIBLINGS (NAMED) of its group sees the same first siblings (named
 * others) as every other such member, so those lists and names are one value for the group.
 */
class GroupShare {
  private evidenceOfTail: Amendment['evidence'] | undefined;
  private othersOfTail: string | undefined;

  constructor(
    private readonly group: readonly SessionFinding[],
    private readonly sharedBy: 'pid' | 'port-owner',
    private readonly newestBy: NewestBy | undefined,
  ) {}

  /** The evidence of the member at position k: its first siblings, how many in all, how they were ordered. */
  evidence(k: number): Amendment['evidence'] {
    if (k < MAX_SIBLINGS) return this.make(someIds(this.group, this.group[k], MAX_SIBLINGS));
    return (this.evidenceOfTail ??= this.make(someIds(this.group, undefined, MAX_SIBLINGS)));
  }

  /** The others of the member at position k, named as reasons name them. */
  others(k: number): string {
    if (k < NAMED) return nameSome(this.group, this.group[k]);
    return (this.othersOfTail ??= nameSome(this.group, this.group[k]));
  }

  private make(siblings: string[]): Amendment['evidence'] {
    const siblingCount = this.group.length - 1;
    const { sharedBy, newestBy } = this;
    return newestBy === undefined ? { siblings, siblingCount, sharedBy } : { siblings, siblingCount, sharedBy, newestBy };
  }
}

function byText(by: NewestBy): string {
  return by.replace('_', ' ');
}

function supersede(indices: readonly number[], findings: readonly SessionFinding[], policy: Policy, out: Amendment[]): void {
  const group = indices.map((i) => findings[i]!);
  const order = newestOrder(group.map((f) => f.entry), policy);
  const newest = order ? group.filter((f) => order.rank(f.entry) === order.max) : group;
  const share = new GroupShare(group, 'pid', order?.by);
  // Every older member says the same: one judgement for the group (the pid is the group's).
  let older: Judgement | undefined;
  // Members whose own reason and named others are the same share one text.
  let lastReason: string | undefined;
  let lastOthers: string | undefined;
  let last: Judgement | undefined;
  const alsoClaimed = (f: SessionFinding, k: number, tail: string): Judgement => {
    const others = share.others(k);
    if (last === undefined || f.reason !== lastReason || others !== lastOthers) {
      last = judged('live', `${f.reason}; also claimed by ${others}, ${tail}`, 'shared pid');
      lastReason = f.reason;
      lastOthers = others;
    }
    return last;
  };
  group.forEach((f, k) => {
    let judgement: Judgement;
    if (!order) {
      judgement = alsoClaimed(f, k, 'and nothing tells which registration is newest');
    } else if (order.rank(f.entry) < order.max) {
      judgement = older ??= judged('superseded', `pid ${String(judgedPid(f.entry, f.evidence))} is alive but belongs to the newer entry ${nameSome(newest, undefined)} (by ${byText(order.by)})`);
    } else if (newest.length > 1) {
      judgement = alsoClaimed(f, k, 'registered at the same time: cannot tell which is newest');
    } else {
      judgement = judged('live', `${f.reason}; newest of ${group.length} entries on this pid`, f.note);
    }
    out.push({ index: indices[k]!, judgement, evidence: share.evidence(k) });
  });
}

/**
 * Of the local entries of one source whose ports are served by one process, whatever the
 * registry's status, all but the newest registration are superseded: an old pi-socket re-registers
 * a previous session's id from the same process (protocols.md §1), and only the newest is current.
 */
export function supersededByPortOwner(findings: readonly SessionFinding[], policy: Policy): Amendment[] {
  let groups: Map<string, number[]> | undefined;
  for (let i = 0; i < findings.length; i++) {
    const f = findings[i]!;
    const owner = f.evidence.port?.owner;
    if (owner === undefined || (f.verdict !== 'live' && f.verdict !== 'offline')) continue;
    const key = `${owner}\u0000${f.source}\u0000${pidSpace(f)}`;
    groups ??= new Map();
    const group = groups.get(key);
    if (group) group.push(i);
    else groups.set(key, [i]);
  }
  const out: Amendment[] = [];
  if (!groups) return out;
  for (const indices of groups.values()) {
    if (indices.length < 2) continue;
    const group = indices.map((i) => findings[i]!);
    const order = newestOrder(group.map((f) => f.entry), policy);
    const newest = order ? group.filter((f) => order.rank(f.entry) === order.max) : group;
    const owner = group[0]!.evidence.port!.owner!;
    const share = new GroupShare(group, 'port-owner', order?.by);
    // Every older member says the same: one judgement for the group.
    let superseded: Judgement | undefined;
    group.forEach((f, k) => {
      const older = order !== undefined && newest.length === 1 && order.rank(f.entry) < order.max;
      const judgement: Judgement | undefined = older
        ? (superseded ??= judged('superseded', `pid ${owner} serves its port and also the newer entry ${nameSome(newest, undefined)} (by ${byText(order.by)})`))
        : undefined;
      out.push({ index: indices[k]!, judgement, evidence: share.evidence(k) });
    });
  }
  return out;
}

export type NewestBy = NonNullable<Evidence['newestBy']>;

/**
 * Which of `entries` registered last: by registered_at, else the order ghostwatch saw them join,
 * else last_seen. A key decides only if every entry has it and not all tie on it; undefined when
 * nothing tells.
 */
export function newestOrder(
  entries: readonly SessionEntry[],
  policy: Policy,
): { by: NewestBy; rank: (e: SessionEntry) => number; max: number } | undefined {
  const candidates: [NewestBy, (e: SessionEntry) => number | undefined][] = [
    ['registered_at', (e) => (e.registeredAt === undefined ? undefined : toLocal(policy, e.source, e.registeredAt))],
    ['join_order', (e) => e.joinSeq],
    ['last_seen', (e) => e.lastSeen],
  ];
  for (const [by, get] of candidates) {
    // A key decides only if every entry of the group has it: mixing keys would compare unlike things.
    if (!entries.every((e) => get(e) !== undefined)) continue;
    const rank = (e: SessionEntry): number => get(e) as number;
    const max = Math.max(...entries.map(rank));
    if (entries.every((e) => rank(e) === max)) continue; // all tied on this key: try the next one
    return { by, rank, max };
  }
  return undefined;
}
