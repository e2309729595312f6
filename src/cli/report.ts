// The one-pass report (`check`, and the live view's fallback when there is no terminal): a
// compact table that reads without colour, problems first, and a summary line last.
import { VERDICTS, type Finding, type Verdict } from '../core/types.js';
import { sanitize } from '../core/sanitize.js';
import type { Leftover } from '../core/leftovers.js';
import { departedOf, leftoversOf, staleOf, type EngineSnapshot } from '../engine/types.js';
import { leftoverLine } from '../ui/leftover-text.js';
import { STATUS_TRAITS } from '../sources/types.js';
import { visibleRows } from '../ui/rows.js';
import { fit, isoTime, truncate } from '../ui/text.js';
import type { LookedFor } from './settings.js';

/** With no registry named: the ones found (read, or failing) and the ones looked for and not there. */
export interface Discovered {
  readonly found: readonly { readonly name: string; readonly where: string }[];
  readonly absent: readonly LookedFor[];
}

/** What the sources' states and the look at the files (`absent`: the registries not there at all) say was found. */
export function discovered(snap: EngineSnapshot, absent: readonly LookedFor[]): Discovered {
  const where = (s: EngineSnapshot['sources'][number]) => ({ name: sanitize(s.name, 40), where: sanitize(s.url, 200) });
  return {
    found: snap.sources.filter((s) => s.status !== 'absent').map(where),
    absent: [...snap.sources.filter((s) => s.status === 'absent').map(where), ...absent.map((a) => ({ name: sanitize(a.name, 40), where: sanitize(a.where, 200) }))],
  };
}

/** "found claude, claude-view; not here: hypivisor (ws://localhost:31415/ws), agentctl (/home/me/.agentctl/agentctl.sock)" */
export function discoveryLine(d: Discovered): string {
  const found = d.found.length > 0 ? `found ${d.found.map((f) => f.name).join(', ')}` : 'found none';
  const absent = d.absent.length > 0 ? `; not here: ${d.absent.map((a) => `${a.name} (${a.where})`).join(', ')}` : '';
  return `registries on this host (none named): ${found}${absent}`;
}

export function summaryLine(counts: Readonly<Partial<Record<Verdict, number>>>, problems: number): string {
  const parts = VERDICTS.filter((v) => (counts[v] ?? 0) > 0).map((v) => `${counts[v]} ${v}`);
  return `${parts.length > 0 ? parts.join(', ') : 'no entries'} (${problems} problem${problems === 1 ? '' : 's'})`;
}

/**
 * `width`: the terminal's, when printing to one; piped, nothing is cut (Infinity). `absent`: with
 * no registry named, those looked for and not there (the report then starts with what was found).
 */
export function formatReport(snap: EngineSnapshot, width = 120, absent?: readonly LookedFor[]): string {
  const lines: string[] = [];
  if (absent) lines.push(discoveryLine(discovered(snap, absent)));
  // A source that could not be read is named once, on stderr, with its cause (sourceErrors): here
  // only what was read, so "nothing read" never reads as "no entries".
  const unread = snap.sources.filter((s) => STATUS_TRAITS[s.status].error);
  for (const s of snap.sources) {
    if (unread.includes(s)) continue;
    // Found absent: the line above said so.
    if (absent && s.status === 'absent') continue;
    const err = s.lastError ? `: ${s.lastError}` : '';
    lines.push(`source ${sanitize(s.name, 32)} ${sanitize(s.url, 100)}: ${s.status}${err}`);
    for (const w of s.warnings ?? []) lines.push(`  warning: ${w}`);
    if (s.eviction && !s.eviction.available && STATUS_TRAITS[s.status].reading) lines.push(`  eviction unavailable: ${s.eviction.why ?? ''}`);
  }
  for (const h of snap.hosts ?? []) lines.push(truncate(hostLine(h), width).trimEnd());
  const rows: Finding[] = [
    ...visibleRows([...snap.findings, ...(snap.departed ?? [])], { tab: 'sessions', filter: '', problemsOnly: false, sortReverse: false }, { now: snap.computedAt }),
    ...visibleRows(snap.findings, { tab: 'claims', filter: '', problemsOnly: false, sortReverse: false }, { now: snap.computedAt }),
  ];
  if (rows.length === 0 && unread.length === snap.sources.length && snap.sources.length > 0) return '';
  if (rows.length > 0) {
    const idWidth = Math.min(36, Math.max(8, ...rows.map((f) => sanitize(f.id, 36).length)));
    // With several registries (with none named: several found), which one each row is from.
    const several = (absent ? snap.sources.filter((s) => s.status !== 'absent') : snap.sources).length > 1;
    const sourceWidth = several ? Math.min(28, Math.max(6, ...snap.sources.map((s) => sanitize(s.name, 28).length))) : 0;
    const source = (text: string): string => (sourceWidth > 0 ? `${fit(text, sourceWidth)} ` : '');
    lines.push('');
    lines.push(`${fit('VERDICT', 12)} ${fit('KIND', 7)} ${source('SOURCE')}${fit('ID', idWidth)} ${fit('PID', 7, 'right')}  REASON`);
    for (const f of rows) {
      // '~': the last known row of a source not read now.
      const marker = `${staleOf(f) ? '~' : ''}${f.problem ? '!' : ' '}`;
      const pid = f.entry.pid === undefined ? '-' : sanitize(f.entry.pid, 7);
      const line = `${fit(marker + f.verdict, 12)} ${fit(f.kind, 7)} ${source(sanitize(f.source, 28))}${fit(sanitize(f.id, 200), idWidth)} ${fit(pid, 7, 'right')}  ${f.reason}`;
      lines.push(truncate(line, width).trimEnd());
      // What its dead agent left running, one line each, under its row.
      for (const l of leftoversOf(f) ?? []) lines.push(truncate(`${' '.repeat(13)}left running: ${leftoverLine(l, snap.computedAt)}`, width).trimEnd());
    }
  }
  lines.push('');
  const notRead = unread.length > 0 ? `; not read: ${unread.map((s) => sanitize(s.name, 32)).join(', ')}` : '';
  lines.push(summaryLine(snap.counts, snap.problems) + notRead + leftoversSummary(snap));
  return `${lines.join('\n')}\n`;
}

/** "; 3 leftovers of 2 dead agents" (K or `reap --leftovers` ends them), or nothing. */
function leftoversSummary(snap: EngineSnapshot): string {
  const groups = [...snap.findings, ...(snap.departed ?? [])].filter((f) => (leftoversOf(f)?.length ?? 0) > 0);
  if (groups.length === 0) return '';
  const n = groups.reduce((sum, f) => sum + (leftoversOf(f)?.length ?? 0), 0);
  return `; ${n} leftover${n === 1 ? '' : 's'} of ${groups.length} dead agent${groups.length === 1 ? '' : 's'}`;
}

/** A leftover in `check --json`: the process as read, its times as ISO text. */
export function leftoverJson(l: Leftover): Record<string, unknown> {
  return {
    pid: l.pid,
    ppid: l.ppid,
    name: l.name,
    cmd: l.cmd,
    state: l.state,
    ...(l.uid !== undefined ? { uid: l.uid } : {}),
    ...(l.user !== undefined ? { user: l.user } : {}),
    otherUser: l.otherUser,
    ...(l.startedAt !== undefined ? { startedAt: isoTime(l.startedAt) } : {}),
    ...(l.startTicks !== undefined ? { startTicks: l.startTicks } : {}),
    ...(l.cpuPct !== undefined ? { cpuPct: l.cpuPct } : {}),
    ...(l.rssBytes !== undefined ? { rssBytes: l.rssBytes } : {}),
    ports: l.ports ?? [],
    agentPid: l.agentPid,
  };
}

/** One remote host in one line: `ssh build-42 (me@build-42.internal): up, rtt 12 ms`. Its strings are sanitized by the engine. */
export function hostLine(h: NonNullable<EngineSnapshot['hosts']>[number]): string {
  const how = h.state === 'up' ? `up${h.rttMs !== undefined ? `, rtt ${h.rttMs} ms` : ''}` : h.state === 'down' ? `down: ${h.reason ?? 'unknown'}` : 'connecting';
  return `ssh ${h.machine} (${h.dest}): ${how}`;
}

/** `check --json`: the object design.md names, one per run; `lookedFor` when no registry was named. */
export function checkJson(snap: EngineSnapshot, absent?: readonly LookedFor[]): Record<string, unknown> {
  return {
    host: snap.host,
    checkedAt: isoTime(snap.computedAt),
    ...(absent ? { lookedFor: discovered(snap, absent) } : {}),
    sources: snap.sources.map((s) => ({
      name: s.name,
      url: s.url,
      connected: s.status === 'connected' || s.status === 'watching',
      status: s.status,
      ...(s.cause ? { cause: s.cause } : {}),
      ...(s.lastError ? { error: s.lastError } : STATUS_TRAITS[s.status].error ? { error: s.cause ?? s.status } : {}),
      ...(s.downSince !== undefined ? { downSince: isoTime(s.downSince) } : {}),
      ...(s.warnings?.length ? { warnings: s.warnings } : {}),
      ...(s.eviction ? { eviction: s.eviction } : {}),
    })),
    findings: snap.findings.map(findingJson),
    // Agents gone from their registry whose leftovers still run: not findings of any registry.
    ...(snap.departed && snap.departed.length > 0 ? { departed: snap.departed.map(findingJson) } : {}),
    ...(snap.hosts ? { hosts: snap.hosts } : {}),
    summary: Object.fromEntries(VERDICTS.map((v) => [v, snap.counts[v]])),
  };
}

function findingJson(f: EngineSnapshot['findings'][number]): Record<string, unknown> {
  return {
    source: f.source,
    kind: f.kind,
    id: f.id,
    ...(f.kind === 'claim' ? { holder: f.holder } : {}),
    verdict: f.verdict,
    problem: f.problem,
    evictable: f.evictable,
    reason: f.reason,
    ...(f.note ? { note: f.note } : {}),
    // What the registry says the session is doing, as the STATUS column shows it.
    ...(f.kind === 'session' && f.entry.status !== undefined ? { status: f.entry.status } : {}),
    ...(staleOf(f) ? { stale: { since: isoTime(staleOf(f)!.since), why: staleOf(f)!.why } } : {}),
    evidence: f.evidence,
    entry: f.entry.raw ?? f.entry,
    ...(departedOf(f) ? { departed: true } : {}),
    ...(leftoversOf(f)?.length ? { leftovers: leftoversOf(f)!.map(leftoverJson) } : {}),
  };
}

// What JSON.stringify leaves raw but a terminal acts on or hides: DEL and C1 controls (0x9B is
// CSI), format characters (bidi overrides and isolates, zero-width, BOM, tags) and the line and
// paragraph separators. C0 controls and lone surrogates JSON.stringify escapes itself.
const JSON_UNSAFE = /[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * JSON text with every character a terminal could act on spelled as \uXXXX (each UTF-16 unit of
 * an astral one), so that `cat`ing it is as safe as the table. It parses back to the same value:
 * outside strings JSON text is ASCII, so every such character is inside a string.
 */
export function escapeJsonText(json: string): string {
  return json.replace(JSON_UNSAFE, (ch) => {
    let out = '';
    for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return out;
  });
}

/** `check --json` as printed: checkJson, indented, terminal-safe. */
export function checkJsonText(snap: EngineSnapshot, absent?: readonly LookedFor[]): string {
  return `${escapeJsonText(JSON.stringify(checkJson(snap, absent), null, 2))}\n`;
}

/** One line on stderr naming every registry that could not be read and why, or undefined. */
export function sourceErrors(snap: EngineSnapshot): string | undefined {
  const bad = snap.sources.filter((s) => STATUS_TRAITS[s.status].error);
  if (bad.length === 0) return undefined;
  return bad.map(sourceError).join('; ');
}

function sourceError(s: EngineSnapshot['sources'][number]): string {
  const where = `${sanitize(s.name, 32)} at ${sanitize(s.url, 100)}`;
  const cause = s.cause ?? (s.status === 'connecting' ? 'no answer yet (still connecting)' : s.status);
  // The longer text when it says more than the few words (the address, the errno, what to check).
  const more = s.lastError && s.lastError !== cause ? `: ${s.lastError}` : '';
  return `${where}: ${cause}${more}`;
}
