// A dead agent's leftover processes as text: one line each for the detail view, the K dialog and
// `check`'s report. Every string read from a process (name, command line, user) is sanitized.
import { formatDuration } from '../core/duration.js';
import type { Leftover } from '../core/leftovers.js';
import { sanitize } from '../core/sanitize.js';

/** Bytes as a person reads them: "512 KB", "40 MB", "1.2 GB". */
export function memText(bytes: number | undefined): string {
  if (bytes === undefined || !Number.isFinite(bytes) || bytes < 0) return '-';
  const kb = bytes / 1024;
  if (kb < 1024) return `${Math.round(kb)} KB`;
  const mb = kb / 1024;
  if (mb < 1024) return `${mb < 10 ? mb.toFixed(1) : Math.round(mb)} MB`;
  return `${(mb / 1024).toFixed(1)} GB`;
}

/** Whose process it is: the user's name, or the uid. */
export function ownerText(l: Leftover): string {
  if (l.user !== undefined) return sanitize(l.user, 32);
  return l.uid === undefined ? 'unknown user' : `uid ${l.uid}`;
}

/** ":3000 :3001", or "" when it listens on none. */
export function portsText(l: Leftover): string {
  return (l.ports ?? []).map((p) => `:${p}`).join(' ');
}

/** "pid 4242 node server.js --port 3000" (the command cut at `max` characters). */
export function commandText(l: Leftover, max = 200): string {
  return `pid ${l.pid} ${sanitize(l.cmd || l.name, max)}`;
}

/** What it is now: "up 3m12s, CPU 12%, RSS 40 MB, listens on :3000, user root (another user)". */
export function leftoverFacts(l: Leftover, now: number): string {
  const parts: string[] = [];
  if (l.startedAt !== undefined) parts.push(`up ${formatDuration(Math.max(0, now - l.startedAt))}`);
  if (l.cpuPct !== undefined) parts.push(`CPU ${l.cpuPct}%`);
  if (l.rssBytes !== undefined) parts.push(`RSS ${memText(l.rssBytes)}`);
  const ports = portsText(l);
  if (ports) parts.push(`listens on ${ports}`);
  if (l.state === 'T' || l.state === 't') parts.push('stopped');
  parts.push(`user ${ownerText(l)}${l.otherUser ? ' (another user)' : ''}`);
  return parts.join(', ');
}

/** One line: the command, then its facts. */
export function leftoverLine(l: Leftover, now: number, max = 200): string {
  return `${commandText(l, max)}: ${leftoverFacts(l, now)}`;
}
