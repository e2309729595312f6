// The text of the detail view, as lines: pure, so it can be tested and scrolled without a
// terminal (the help overlay's is help.ts). Every registry string goes through sanitize.
import { formatDuration } from '../core/duration.js';
import { sanitize } from '../core/sanitize.js';
import { INVALID_TIME, invalidTimesText, isTime, TIME_RANGE_MS } from '../core/time.js';
import type { TmuxPane } from '../core/tmux.js';
import type { Evidence, Finding, ProcessInfo } from '../core/types.js';
import { bytesText, cpuText } from '../core/usage.js';
import { checkingOf, deadSinceOf, departedOf, goneAtFirstProbeOf, leftoversOf, staleOf } from '../engine/types.js';
import { ageOrigin } from './ages.js';
import { keysOf } from './keymap.js';
import { commandText, leftoverFacts } from './leftover-text.js';
import { isoTime, momentText } from './text.js';

export interface DetailLine {
  readonly label: string;
  readonly value: string;
  /** Section titles are drawn bold. */
  readonly heading?: boolean;
}

const iso = (ms: number | undefined): string => (ms === undefined ? '-' : isoTime(ms).replace('.000Z', 'Z'));

/** Raw registry fields that are moments: shown as local time and age, never as a raw epoch. */
const MOMENT_KEY = /(_at|_seen|_since|[a-z]At|[a-z]Since)$/;

/**
 * A raw field's value as a moment on the local clock, if it is one: epoch seconds or ms (a number
 * above 1e11 is ms), or an ISO text; `invalid` when it is one of those and no time (core/time.ts).
 * `offsetMs` is the registry's clock minus ours.
 */
function rawMoment(key: string, v: unknown, offsetMs: number, now: number): number | 'invalid' | undefined {
  if (!MOMENT_KEY.test(key)) return undefined;
  let ms: number | undefined;
  if (typeof v === 'number' && v > 0) ms = v > 1e11 ? v : v * 1000;
  else if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v)) ms = Date.parse(v);
  if (ms === undefined) return undefined;
  return isTime(ms - offsetMs, now) ? ms - offsetMs : 'invalid';
}

/** A raw field's value as the detail view shows it: a moment as time and age, no time as such. */
function rawValue(key: string, v: unknown, offsetMs: number, now: number): string {
  const at = rawMoment(key, v, offsetMs, now);
  if (at === 'invalid') return `${INVALID_TIME} (${sanitize(v, 40)})`;
  // A nested value is one flat line of JSON-like text, cut at 400 characters and MAX_DEPTH levels
  // (sanitize writes it with compactText): never JSON.stringify, which overflows on a deep one.
  return at !== undefined ? momentText(at, now) : sanitize(v, 400);
}

const YEARS = Math.round(TIME_RANGE_MS / (365.25 * 86_400_000));

/** "0.2 s ago" under ten seconds, then "12s ago", "5m42s ago": how long since a check, truthfully. */
export function checkedText(at: number, now: number): string {
  const ms = Math.max(0, now - at);
  return ms < 10_000 ? `${(Math.floor(ms / 100) / 10).toFixed(1)} s ago` : `${formatDuration(ms)} ago`;
}

/**
 * `lastChecked`: when the engine last asked the OS (the evidence's time is when its facts began).
 * `sourceUrl`: where the row's source reads (its registry's address, its folder), shown with its name.
 * `readOnly`: started with --read-only, where nothing is evictable from here: it says so instead.
 */
export function detailLines(f: Finding, now: number, process?: ProcessInfo, clockOffsetMs = 0, pane?: TmuxPane, lastChecked?: number, sourceUrl?: string, readOnly = false): DetailLine[] {
  const eviction = readOnly ? 'read-only (eviction is off)' : f.evictable ? 'evictable' : 'evictable only with force';
  const lines: DetailLine[] = [
    { label: f.kind === 'session' ? 'session' : 'claim on', value: sanitize(f.id, 400), heading: true },
    { label: 'verdict', value: `${f.verdict}${f.note ? ` (${f.note})` : ''}${f.problem ? ', a problem' : ''}, ${eviction}` },
    { label: 'why', value: f.reason },
    { label: 'source', value: `${sanitize(f.source, 64)}${sourceUrl ? ` (${sanitize(sourceUrl, 200)})` : ''}` },
  ];
  if (checkingOf(f)) lines.push({ label: 'checking', value: 'its process has not had its first probe yet: the verdict is not known yet' });
  const dead = deadSinceOf(f);
  if (dead !== undefined) lines.push({ label: 'dead since', value: deadSinceText(f, dead, now, clockOffsetMs) });
  const stale = staleOf(f);
  if (stale) {
    lines.push({
      label: 'stale',
      value: `${sanitize(stale.source, 20)} is not connected (${stale.why}): this is the last known row, current as of ${momentText(stale.since, now)}; not evictable until it reads the registry again`,
    });
  }
  if (departedOf(f)) lines.push({ label: 'not in the registry', value: `${sanitize(f.source, 40)} no longer lists it; it is shown for what its agent left running (nothing to evict)` });
  const leftovers = leftoversOf(f);
  if (leftovers && leftovers.length > 0) {
    lines.push({ label: 'left running', value: `${leftovers.length} process${leftovers.length === 1 ? '' : 'es'} its dead agent started; ${keysOf('leftovers.end', 'detail')} ends them (asks first)`, heading: true });
    for (const l of leftovers) {
      lines.push({ label: `pid ${l.pid}`, value: commandText(l, 1000).replace(/^pid \d+ /, '') });
      lines.push({ label: '', value: leftoverFacts(l, now) });
    }
  }
  if (pane) {
    const gone = f.evidence.kill === 'ESRCH';
    lines.push({ label: 'tmux pane', value: `${pane.target} (${pane.id})${gone ? ', where it ran' : ''}; o goes there` });
  }
  if (f.kind === 'claim') lines.push({ label: 'holder', value: sanitize(f.holder ?? '-', 200) });
  if (f.kind === 'claim' && f.entry.note) lines.push({ label: 'note', value: sanitize(f.entry.note, 400) });

  lines.push({ label: 'registry entry', value: '', heading: true });
  const raw = f.entry.raw ?? (f.entry as unknown as Record<string, unknown>);
  for (const [k, v] of Object.entries(raw)) {
    if (k === 'raw') continue;
    lines.push({ label: sanitize(k, 40), value: rawValue(k, v, clockOffsetMs, now) });
  }

  lines.push({ label: 'evidence', value: '', heading: true });
  lines.push(...evidenceLines(f.evidence, now, clockOffsetMs, lastChecked));
  const proc = process ?? f.evidence.process;
  if (proc) {
    lines.push({ label: 'process', value: '', heading: true });
    lines.push({ label: 'pid', value: `${proc.pid} (parent ${proc.ppid})` });
    lines.push({ label: 'name', value: sanitize(proc.name, 100) });
    lines.push({ label: 'command', value: sanitize(proc.cmd, 1000) });
    if (proc.startedAt !== undefined) lines.push({ label: 'started', value: iso(proc.startedAt) });
  }
  return lines;
}

/**
 * When the process ended: the first probe that found it gone; or, when that was this monitor's
 * first look at it, a lower bound (ages.ts): "at least 6m22s: the registry has had it offline
 * since 11:56:44 (6m22s ago); already gone at this monitor's first probe, 12:03:04 (3s ago)".
 */
function deadSinceText(f: Finding, dead: number, now: number, clockOffsetMs: number): string {
  if (!goneAtFirstProbeOf(f)) return `${momentText(dead, now)}: the first probe that found its process gone`;
  const since = ageOrigin(f, { clockOffsetMs: { [f.source]: clockOffsetMs } })?.since ?? dead;
  const first = `already gone at this monitor's first probe, ${momentText(dead, now)}`;
  const bound = `at least ${formatDuration(Math.floor(Math.max(0, now - since) / 1000) * 1000)}`;
  return since < dead ? `${bound}: the registry has had it offline since ${momentText(since, now)}; ${first}` : `${bound}: ${first}`;
}

function evidenceLines(e: Evidence, now: number, clockOffsetMs: number, lastChecked: number | undefined): DetailLine[] {
  const out: DetailLine[] = [];
  const add = (label: string, value: string | undefined) => value !== undefined && out.push({ label, value });
  const ssh = e.host.ssh;
  const where = e.host.local ? `this host (${e.host.matchedAs})` : ssh === undefined ? 'not this host' : ssh.state === 'up' ? `another host, verified ${sanitize(ssh.via, 120)}` : `another host, ssh ${ssh.state}${ssh.reason ? `: ${sanitize(ssh.reason, 160)}` : ''}`;
  add('host', `${sanitize(e.host.machine ?? '(none)', 100)}: ${where}`);
  if (e.pid) add('pid', e.pid.unusable ? `${sanitize(e.pid.raw, 40)}: not used (${e.pid.unusable})` : String(e.pid.value));
  if (e.pidDomain) add('pid domain', pidDomainText(e.pidDomain));
  if (e.kill) add('kill(pid, 0)', e.kill === 'ok' ? 'exists' : e.kill === 'EPERM' ? 'EPERM: exists, another user owns it' : e.kill === 'ESRCH' ? 'ESRCH: no such process' : `error: ${e.killError ?? '?'}`);
  if (e.state) add('state', e.state === 'Z' ? 'Z (zombie: exited, not reaped)' : e.state);
  if (e.stoppedSince !== undefined) add('stopped since', `${momentText(e.stoppedSince, now)}: the first probe that found it stopped`);
  if (e.usage) out.push(...usageLines(e.usage));
  if (e.handshake) add('port answers', handshakeText(e.handshake));
  if (e.start) {
    const rel = e.start.deltaMs >= 0 ? `${formatDuration(e.start.deltaMs)} after` : `${formatDuration(-e.start.deltaMs)} before`;
    add('process started', `${iso(e.start.processStartedAt)}, ${rel} ${e.start.reference.replace('_', ' ')} ${iso(e.start.referenceAt)} (tolerance ${formatDuration(e.start.toleranceMs)})`);
  }
  if (e.startTicks) {
    const same = e.startTicks.recorded === e.startTicks.process;
    add('exact start', `tick ${e.startTicks.process} after boot; the record says ${e.startTicks.recorded}${same ? ': the same process' : ': another process'}`);
  }
  if (e.invalidTimes) add(INVALID_TIME, `${sanitize(invalidTimesText(e.invalidTimes), 300)}: no time within ${YEARS} years of now, not used (unknown)`);
  if (e.alsoOpenIn) add('also open in', `pid ${e.alsoOpenIn.join(', ')}: the same session id in another live process`);
  if (e.port) {
    add('port probe', `${e.port.port}: ${e.port.result}${e.port.detail ? ` (${sanitize(e.port.detail, 80)})` : ''}`);
    if (e.port.listeners && e.port.listeners.length > 0) add('listening on', e.port.listeners.map((a) => sanitize(a, 46)).join(', '));
    if (e.port.owner !== undefined) add('served by', `pid ${e.port.owner} (the entry is judged by it)`);
    else if (e.port.ownerUnknown) add('served by', `unknown: ${sanitize(e.port.ownerUnknown, 120)}`);
  }
  if (e.pending) add('pending age', `${formatDuration(e.pending.ageMs)} from ${e.pending.from.replace('_', ' ')} (TTL ${formatDuration(e.pending.ttlMs)})`);
  if (e.siblings) {
    const more = (e.siblingCount ?? e.siblings.length) - e.siblings.length;
    const names = `${e.siblings.map((s) => sanitize(s, 60)).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
    add(e.sharedBy === 'port-owner' ? 'same process' : 'same pid', `${names}${e.newestBy ? `; newest by ${e.newestBy.replace('_', ' ')}` : ''}`);
  }
  if (e.registry) add('registry says', `${sanitize(e.registry.status ?? '-', 30)}${e.registry.offlineSince !== undefined ? `, offline since ${momentText(e.registry.offlineSince - clockOffsetMs, now)}` : ''}`);
  if (e.underlying) add('locally it is', e.underlying);
  if (e.holder) {
    const where = e.holder.source ? ` in ${sanitize(e.holder.source, 20)} (same id)` : '';
    add('holder', `${sanitize(e.holder.id ?? '(none)', 100)}${where}: ${e.holder.present ? `${e.holder.verdict}${e.holder.underlying ? ` (locally ${e.holder.underlying})` : ''}` : 'not in the registry'}`);
  }
  if (e.heartbeat) add('heartbeat', `${formatDuration(e.heartbeat.ageMs)} ago (stale after ${formatDuration(e.heartbeat.staleAfterMs)})`);
  const checked = lastChecked ?? e.checkedAt;
  if (checked !== undefined) add('checked', checkedText(checked, now));
  return out;
}

/** What the process costs, as the probe last read it. */
function usageLines(u: NonNullable<Evidence['usage']>): DetailLine[] {
  const lines: DetailLine[] = [];
  if (u.cpuPct !== undefined) {
    const over = u.cpuOver === 'life' ? 'on average since it started (one reading so far)' : 'between the last two probes';
    lines.push({ label: 'CPU', value: `${cpuText(u.cpuPct)} % of one core, ${over}` });
  }
  if (u.rssBytes !== undefined) lines.push({ label: 'memory', value: `${bytesText(u.rssBytes)} resident (${u.rssBytes.toLocaleString('en-US')} bytes)` });
  return lines;
}

/** The WebSocket probe of the agent's own port: what came back, and when. */
function handshakeText(h: NonNullable<Evidence['handshake']>): string {
  const row = h.misses > 1 ? `, ${h.misses} times in a row` : '';
  if (h.result === 'answered') return `port ${h.port}: answered an upgrade request in ${formatDuration(h.ms)}${h.detail ? ` (${sanitize(h.detail, 60)})` : ''}`;
  if (h.result === 'timeout') return `port ${h.port}: no answer to an upgrade request within ${formatDuration(h.boundMs)}${row}`;
  if (h.result === 'closed') return `port ${h.port}: closed without answering an upgrade request${row}`;
  return `port ${h.port}: could not be asked (${sanitize(h.detail ?? 'error', 80)})`;
}

const DOMAIN_WORDS: Record<NonNullable<Evidence['pidDomain']>['status'], string> = {
  'this-namespace': "ghostwatch's own pid namespace: judged as any pid",
  mapped: 'another pid namespace of this machine',
  'namespace-gone': 'that namespace has no process left',
  'pid-not-in-namespace': 'no process of that namespace has this pid',
  unseen: 'that namespace cannot be seen from here',
  'other-machine': "another machine's pid table",
  unreadable: 'not a domain this release reads',
};

function pidDomainText(d: NonNullable<Evidence['pidDomain']>): string {
  const pids = d.hostPid !== undefined ? `pid ${d.nsPid} there is pid ${d.hostPid} here` : `pid ${d.nsPid ?? '?'} there`;
  return `${sanitize(d.domain, 120)}: ${DOMAIN_WORDS[d.status]}; ${pids}`;
}
