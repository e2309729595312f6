// The verdict vocabulary and everything that follows from a verdict, in one table (design.md,
// "Verdicts"). Every list of verdicts elsewhere (the verdict types, the table's sort order, what
// reap evicts, the status line's problems and short names, the colours by meaning, the help's
// markers, the JSON summary) is derived from VERDICT_TRAITS, never spelled out again.
// Colours stay in the UI theme: core says what a verdict means (its tone), not how it looks.

/** What a verdict says, by meaning: the UI maps each tone to a colour. */
export type VerdictTone = 'problem' | 'warning' | 'ok' | 'info' | 'muted';

/** The text marker before a verdict, so a table reads without colour. */
export type VerdictMarker = '!' | '?' | '-' | '=' | ' ';

export interface VerdictTraits {
  /** Whether the verdict is given to session entries or to claims / locks. */
  readonly kind: 'session' | 'claim';
  readonly problem: boolean;
  /** Evictable without force. Every finding can be evicted with force. */
  readonly evictable: boolean;
  /** Display order, worst first: 0 is listed first. */
  readonly rank: number;
  /** Name in the tmux status line. */
  readonly short: string;
  readonly tone: VerdictTone;
  readonly marker: VerdictMarker;
  /** One line for the help: what the verdict means. */
  readonly meaning: string;
}

// Rows in design.md's order (sessions, then claims): the order of the summary line and of JSON's
// summary keys. `rank` gives the worst-first order of the table.
const TABLE = {
  live: {
    kind: 'session', problem: false, evictable: false, rank: 10, short: 'live', tone: 'ok', marker: ' ',
    meaning: 'on this host, its process alive and the one that registered',
  },
  ghost: {
    kind: 'session', problem: true, evictable: true, rank: 0, short: 'ghost', tone: 'problem', marker: '!',
    meaning: 'on this host, its process is gone, or nothing listens on its port',
  },
  zombie: {
    kind: 'session', problem: true, evictable: true, rank: 1, short: 'zombie', tone: 'problem', marker: '!',
    meaning: 'its process exited and was never reaped (state Z)',
  },
  reused: {
    kind: 'session', problem: true, evictable: true, rank: 3, short: 'reused', tone: 'warning', marker: '!',
    meaning: 'its pid belongs to a process started after the entry: recycled',
  },
  superseded: {
    kind: 'session', problem: true, evictable: true, rank: 4, short: 'superseded', tone: 'warning', marker: '!',
    meaning: 'a newer entry of the same registry has the same live process',
  },
  pending: {
    kind: 'session', problem: true, evictable: true, rank: 5, short: 'pending', tone: 'warning', marker: '!',
    meaning: 'a pending-* placeholder past its TTL, or whose process is dead',
  },
  offline: {
    kind: 'session', problem: false, evictable: true, rank: 8, short: 'offline', tone: 'muted', marker: '-',
    meaning: 'the registry marks it offline; its process is alive or cannot be checked',
  },
  remote: {
    kind: 'session', problem: false, evictable: false, rank: 9, short: 'remote', tone: 'info', marker: '?',
    meaning: 'on another host: not checked here',
  },
  unverified: {
    kind: 'session', problem: false, evictable: false, rank: 7, short: 'unverified', tone: 'info', marker: '?',
    meaning: 'on this host, but no pid or port to check, or the check failed',
  },
  suspended: {
    kind: 'session', problem: false, evictable: false, rank: 6, short: 'suspended', tone: 'warning', marker: '=',
    meaning: 'the registry says active, its process is stopped (Ctrl-Z, SIGSTOP): it cannot answer until continued',
  },
  held: {
    kind: 'claim', problem: false, evictable: false, rank: 11, short: 'held', tone: 'ok', marker: ' ',
    meaning: 'a claim whose holder is not a problem',
  },
  'stale-claim': {
    kind: 'claim', problem: true, evictable: true, rank: 2, short: 'stale', tone: 'problem', marker: '!',
    meaning: 'a claim whose holder is missing or a problem, or whose own pid is dead',
  },
} as const satisfies Readonly<Record<string, VerdictTraits>>;

type Table = typeof TABLE;

export type Verdict = keyof Table;
/** Verdicts for session entries. */
export type SessionVerdict = { [V in Verdict]: Table[V]['kind'] extends 'session' ? V : never }[Verdict];
/** Verdicts for claims / locks. */
export type ClaimVerdict = Exclude<Verdict, SessionVerdict>;

/** design.md's table, and what the UI and the CLI show of each verdict. */
export const VERDICT_TRAITS: Readonly<Record<Verdict, VerdictTraits>> = TABLE;

/** Every verdict, in the table's order: sessions, then claims. */
export const VERDICTS: readonly Verdict[] = Object.keys(TABLE) as Verdict[];
/** Worst first: the order problems are listed in. */
export const VERDICTS_WORST_FIRST: readonly Verdict[] = [...VERDICTS].sort((a, b) => TABLE[a].rank - TABLE[b].rank);
/** The problem verdicts, in the table's order. */
export const PROBLEM_VERDICTS: readonly Verdict[] = VERDICTS.filter((v) => TABLE[v].problem);

/** The problems counted, in the table's order, by their short names: ["2 ghost", "1 stale"] (tmux's status line). */
export function problemCounts(counts: Readonly<Partial<Record<string, number>>>): string[] {
  return PROBLEM_VERDICTS.filter((v) => (counts[v] ?? 0) > 0).map((v) => `${counts[v]} ${TABLE[v].short}`);
}

/** What each marker but the blank one says, for the help. `named`: the help names its verdicts. */
export const MARKER_MEANINGS: Readonly<Record<Exclude<VerdictMarker, ' '>, { readonly meaning: string; readonly named: boolean }>> = {
  '!': { meaning: 'a problem: evictable', named: false },
  '?': { meaning: 'cannot be checked here', named: true },
  '-': { meaning: 'the registry marks it offline', named: false },
  '=': { meaning: 'stopped: alive, but cannot answer until continued', named: true },
};

/** The verdicts a marker stands for, in the table's order. */
export function verdictsMarked(marker: VerdictMarker): Verdict[] {
  return VERDICTS.filter((v) => TABLE[v].marker === marker);
}
