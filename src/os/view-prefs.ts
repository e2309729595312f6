// The monitor's view choices that outlive a run (the sort, its direction, problems-only, the tab),
// in $XDG_STATE_HOME/ghostwatch/view.json. Read only when it is ours (readOwnFileSync: not a
// symlink, our uid, writable by nobody else, in a folder likewise) and bounded; a file that is not
// what ghostwatch wrote is ignored with one line, never a crash. Written atomically.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sanitize } from '../core/sanitize.js';
import { fsErrorText, readOwnFileSync, writeFileAtomicSync } from './safe-file.js';
import { ghostwatchStateDir } from './state-dir.js';

export interface ViewPrefs {
  readonly tab: 'sessions' | 'claims';
  /** A column id (checked against the tab's columns by the UI), or undefined for the default order. */
  readonly sortColumn: string | undefined;
  readonly sortReverse: boolean;
  readonly problemsOnly: boolean;
}

const MAX_BYTES = 4096;

export function defaultViewPrefsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(ghostwatchStateDir(env), 'view.json');
}

/** The prefs kept, or none; `warning` is the one line to show when the file was there and not used. */
export function loadViewPrefs(path: string): { prefs?: ViewPrefs; warning?: string } {
  let text: string;
  try {
    text = readOwnFileSync(path, MAX_BYTES).toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    return { warning: ignored(path, fsErrorText(err)) };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { warning: ignored(path, 'not valid JSON') };
  }
  const prefs = parseViewPrefs(raw);
  return typeof prefs === 'string' ? { warning: ignored(path, prefs) } : { prefs };
}

function ignored(path: string, why: string): string {
  return sanitize(`view settings ${path} ignored: ${why}`, 200);
}

/** The prefs, or why the value is not prefs ghostwatch wrote. */
export function parseViewPrefs(raw: unknown): ViewPrefs | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'not an object';
  const o = raw as Record<string, unknown>;
  const tab = o.tab ?? 'sessions';
  if (tab !== 'sessions' && tab !== 'claims') return 'tab is not "sessions" or "claims"';
  const col = o.sortColumn ?? null;
  if (col !== null && (typeof col !== 'string' || !/^[a-z]{1,20}$/.test(col))) return 'sortColumn is not a column name';
  if (typeof (o.sortReverse ?? false) !== 'boolean') return 'sortReverse is not true or false';
  if (typeof (o.problemsOnly ?? false) !== 'boolean') return 'problemsOnly is not true or false';
  return { tab, sortColumn: col ?? undefined, sortReverse: o.sortReverse === true, problemsOnly: o.problemsOnly === true };
}

/** Keep the prefs for the next run: undefined when written, else why not (one line). */
export function saveViewPrefs(path: string, prefs: ViewPrefs): string | undefined {
  const body = { tab: prefs.tab, sortColumn: prefs.sortColumn ?? null, sortReverse: prefs.sortReverse, problemsOnly: prefs.problemsOnly };
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileAtomicSync(path, `${JSON.stringify(body)}\n`);
    return undefined;
  } catch (err) {
    return sanitize(`view settings not kept (${path}): ${fsErrorText(err)}`, 200);
  }
}
