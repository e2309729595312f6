// What a dead agent leaves behind: the processes it started (its descendants, learned while it
// was alive: pid and exact start) that still run after it died. Pure: which processes are an
// agent's leftovers, which of them may be listed at all, and which may be signalled, decided on
// facts the engine read. The rules that protect users live here, in one place:
//   - never pid 1 (or below: process groups), never ghostwatch itself or a process it runs under;
//   - never a process that a live agent also has as an ancestor (or learned as its own);
//   - never another user's process, unless ghostwatch runs as root (and then it says so);
//   - a process is the one learned only while its exact start is the same (a recycled pid is not).

/** A process as one moment names it: the pid and its exact start (Linux ticks after boot, else epoch ms). */
export interface ProcessIdentity {
  readonly pid: number;
  /** Clock ticks after boot (/proc/<pid>/stat field 22): exact. */
  readonly startTicks?: number | undefined;
  /** Local clock, epoch ms (macOS ps: to the second). Used only when there are no ticks. */
  readonly startedAt?: number | undefined;
}

/** The same process: the same pid and the same exact start. Without a start to compare, never the same. */
export function sameProcess(a: ProcessIdentity, b: ProcessIdentity): boolean {
  if (a.pid !== b.pid) return false;
  if (a.startTicks !== undefined && b.startTicks !== undefined) return a.startTicks === b.startTicks;
  if (a.startTicks !== undefined || b.startTicks !== undefined) return false;
  return a.startedAt !== undefined && a.startedAt === b.startedAt;
}

/** A key for a process identity ("4242@97090"). */
export function identityKey(p: ProcessIdentity): string {
  return p.startTicks !== undefined ? `${p.pid}@${p.startTicks}` : `${p.pid}@ms${p.startedAt ?? '?'}`;
}

/** A descendant as it was learned: who it is and what it was called then. */
export interface RememberedProcess extends ProcessIdentity {
  readonly ppid: number;
  readonly name: string;
}

/** A registry row that named an agent's pid, kept so an agent gone from its registry can still be named. */
export interface AgentRef {
  readonly source: string;
  readonly id: string;
  readonly machine?: string | undefined;
  readonly cwd?: string | undefined;
}

/** What is remembered of one agent process: who named it, and every descendant seen while it lived. */
export interface AgentMemory {
  readonly agent: ProcessIdentity;
  readonly refs: readonly AgentRef[];
  readonly descendants: readonly RememberedProcess[];
}

/** A process as read now (stat, status, cmdline); `null` in the facts map: gone. */
export interface ProcessNow extends ProcessIdentity {
  readonly ppid: number;
  /** Process state letter (R S D Z T t X ...). */
  readonly state: string;
  readonly name: string;
  readonly cmd: string;
  /** Real uid. */
  readonly uid?: number | undefined;
  /** The user's name, when the passwd file knows it. */
  readonly user?: string | undefined;
  /** Resident memory, bytes. */
  readonly rssBytes?: number | undefined;
  /** CPU use in % of one core: over the last interval, else over its life. */
  readonly cpuPct?: number | undefined;
  /** TCP ports it listens on, ascending. */
  readonly ports?: readonly number[] | undefined;
}

/** A process a dead agent left running, as listed under its row. */
export interface Leftover extends ProcessNow {
  /** The dead agent it descends from. */
  readonly agentPid: number;
  /** Its uid is not ghostwatch's (listed only when ghostwatch runs as root). */
  readonly otherUser: boolean;
}

/** The leftovers of one dead agent. */
export interface LeftoverGroup {
  readonly agent: ProcessIdentity;
  readonly refs: readonly AgentRef[];
  readonly leftovers: readonly Leftover[];
}

/** Who runs ghostwatch: its uid, whether that is root, and its own pid and every pid it runs under. */
export interface Self {
  readonly uid: number | undefined;
  readonly root: boolean;
  readonly pids: ReadonlySet<number>;
}

/** At most this many descendants are remembered per agent (a fork loop must not grow the memory without end). */
export const MAX_REMEMBERED_PER_AGENT = 256;
/** At most this many agents are remembered. */
export const MAX_AGENTS_REMEMBERED = 4096;

/**
 * The agent's memory after a walk of its tree: every descendant walked now, and every one learned
 * before (a descendant whose parent exited is reparented out of the tree, but it is still the
 * agent's: a dev server started with `&` from a shell that has exited). The newest first when capped.
 */
export function learn(prev: AgentMemory | undefined, agent: ProcessIdentity, refs: readonly AgentRef[], walked: readonly RememberedProcess[]): AgentMemory {
  const seen = new Set<string>();
  const descendants: RememberedProcess[] = [];
  for (const p of [...walked, ...(prev?.descendants ?? [])]) {
    const key = identityKey(p);
    if (p.pid <= 1 || seen.has(key)) continue;
    seen.add(key);
    descendants.push(p);
    if (descendants.length >= MAX_REMEMBERED_PER_AGENT) break;
  }
  return { agent, refs: mergeRefs(prev?.refs ?? [], refs), descendants };
}

function mergeRefs(a: readonly AgentRef[], b: readonly AgentRef[]): AgentRef[] {
  const out = [...b];
  for (const r of a) if (!out.some((x) => x.source === r.source && x.id === r.id)) out.push(r);
  return out.slice(0, 8);
}

export interface JudgeInput {
  /** Every agent remembered (after this round's walks were learned). */
  readonly memory: readonly AgentMemory[];
  /** The agent process is alive now (true), gone or replaced (false), or not known yet (undefined: nothing is listed for it). */
  readonly agentAlive: (agent: ProcessIdentity) => boolean | undefined;
  /** The remembered processes as read now; null: gone. A pid not in the map was not read: kept, not listed. */
  readonly now: ReadonlyMap<number, ProcessNow | null>;
  /** Identity keys of every process in a live agent's tree as walked now. */
  readonly liveTrees: ReadonlySet<string>;
  readonly self: Self;
}

export interface Judged {
  /** The memory to keep: dead or replaced processes dropped, agents with none left forgotten. */
  readonly memory: AgentMemory[];
  /** Dead agents with processes listed as their leftovers. */
  readonly groups: LeftoverGroup[];
}

/** Why a process is never listed or signalled, or undefined when it may be. */
export function neverTouch(p: ProcessIdentity & { readonly uid?: number | undefined }, self: Self): string | undefined {
  if (!Number.isInteger(p.pid) || p.pid <= 1) return `pid ${p.pid} is init or a process group: never signalled`;
  if (self.pids.has(p.pid)) return `pid ${p.pid} is ghostwatch itself or a process it runs under`;
  if (p.uid === undefined && !self.root) return `pid ${p.pid}: its owner cannot be read`;
  if (p.uid !== undefined && p.uid !== self.uid && !self.root) return `pid ${p.pid} belongs to another user (uid ${p.uid})`;
  return undefined;
}

/** Gone for good: a zombie has exited (only its parent's wait is left), X is dead. */
function isAlive(p: ProcessNow): boolean {
  return p.state !== 'Z' && p.state !== 'X' && p.state !== 'x';
}

/**
 * Which remembered processes are leftovers now. A dead agent's descendant is listed when it still
 * runs as the same process (same exact start), is in no live agent's tree, was learned by no live
 * agent, and neverTouch has nothing against it.
 */
export function judgeLeftovers(input: JudgeInput): Judged {
  const { now, self } = input;
  const stillThere = (d: RememberedProcess): boolean => {
    const p = now.get(d.pid);
    if (p === undefined) return true; // not read this round: kept
    return p !== null && isAlive(p) && sameProcess(d, p);
  };
  const memory: AgentMemory[] = [];
  const dead: AgentMemory[] = [];
  const ofLiveAgents = new Set<string>();
  for (const m of input.memory) {
    const descendants = m.descendants.filter(stillThere);
    // An agent none of whose processes is left is forgotten (a live one is learned again when it starts more).
    if (descendants.length === 0) continue;
    const alive = input.agentAlive(m.agent);
    const kept = descendants.length === m.descendants.length ? m : { ...m, descendants };
    memory.push(kept);
    if (alive === false) dead.push(kept);
    else for (const d of descendants) ofLiveAgents.add(identityKey(d));
  }
  const groups: LeftoverGroup[] = [];
  for (const m of dead) {
    const leftovers: Leftover[] = [];
    for (const d of m.descendants) {
      const p = now.get(d.pid);
      if (!p) continue;
      const key = identityKey(d);
      if (input.liveTrees.has(key) || ofLiveAgents.has(key)) continue;
      if (neverTouch(p, self) !== undefined) continue;
      leftovers.push({ ...p, agentPid: m.agent.pid, otherUser: p.uid !== self.uid });
    }
    if (leftovers.length > 0) groups.push({ agent: m.agent, refs: m.refs, leftovers: leftovers.sort((a, b) => a.pid - b.pid) });
  }
  return { memory: memory.slice(-MAX_AGENTS_REMEMBERED), groups };
}

/** A selection of leftovers split into what may be signalled and what is refused, with why. */
export function signalPlan<T extends { readonly leftover: Leftover }>(selection: readonly T[], self: Self): { send: T[]; refused: { target: T; why: string }[] } {
  const send: T[] = [];
  const refused: { target: T; why: string }[] = [];
  const seen = new Set<string>();
  for (const t of selection) {
    const key = identityKey(t.leftover);
    if (seen.has(key)) continue;
    seen.add(key);
    const why = neverTouch(t.leftover, self);
    if (why !== undefined) refused.push({ target: t, why });
    else if (t.leftover.startTicks === undefined && t.leftover.startedAt === undefined) refused.push({ target: t, why: `pid ${t.leftover.pid}: no start time to check it against` });
    else send.push(t);
  }
  return { send, refused };
}

/** The LEFT column: how many, and the first port any of them listens on ("2 :3000"). */
export function leftoverCell(leftovers: readonly Leftover[] | undefined): string {
  if (!leftovers || leftovers.length === 0) return '-';
  const ports = leftovers.flatMap((l) => l.ports ?? []).sort((a, b) => a - b);
  return ports.length > 0 ? `${leftovers.length} :${ports[0]}` : String(leftovers.length);
}
