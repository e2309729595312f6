// A file-backed source: one watched directory of JSON files, one format. Entries of all files,
// ids made unique (a second file naming the same session keeps its row, marked with its file
// name: two files for one session is exactly what a ghost hunter wants to see). Eviction moves
// the file an entry came from into ghostwatch's trash, never deletes it (with what belongs to it,
// when the source names its companions: a Claude record's key files and dead socket).

import { basename, join } from 'node:path';
import type { EvictionAction } from '../../core/evict-plan.js';
import { sanitize } from '../../core/sanitize.js';
import type { ClaimEntry, SessionEntry } from '../../core/types.js';
import { fsErrorText, UnsafePath } from '../../os/safe-file.js';
import { FirstSeen } from '../first-seen.js';
import { SnapshotHolder } from '../snapshot-holder.js';
import { moveToTrash } from '../trash-move.js';
import { checkTrashDir, FileChanged } from '../trash.js';
import type { RegistryAnswer, Source } from '../types.js';
import { parseClaimSession, parseClaudeSession, parseLiveMonitor, type FileEntries, type ParseContext } from './formats.js';
import { CLAUDE_SESSION_EVICTION, type RecordCompanions } from './session-companions.js';
import { WatchedDir, type FileReading } from './watched-dir.js';
import { folderSuffixes, type ClaudePaths } from './paths.js';

export { defaultClaudePaths, type ClaudePaths } from './paths.js';

export interface FileSourceOptions {
  readonly name: string;
  readonly dir: string;
  readonly accept: (name: string) => boolean;
  readonly parse: (body: string, name: string, ctx: ParseContext) => FileEntries;
  readonly host: string;
  /** Where evicted files go; undefined: this source cannot evict, for the reason in `readOnlyWhy`. */
  readonly trashDir?: string | undefined;
  readonly readOnlyWhy?: string | undefined;
  /** One sentence for the confirm dialog about what an eviction does here. */
  readonly evictNote?: string | undefined;
  /** Lines for the force dialog about evicting a session here that may be running. */
  readonly liveEvictNote?: readonly string[] | undefined;
  /** What belongs to a record and goes (or is cleaned up) with it on eviction. */
  readonly companions?: RecordCompanions | undefined;
  readonly now?: () => number;
  readonly retryMs?: number;
  /** The source is one file of a shared directory: without it, the source is absent. */
  readonly singleFile?: string | undefined;
}

interface Origin {
  readonly path: string;
  readonly stamp: string;
  /** The session's record as read (what its companions are found from). */
  readonly raw?: unknown;
}

export class FileSource extends SnapshotHolder implements Source {
  private readonly opts: FileSourceOptions;
  private readonly dir: WatchedDir<FileEntries>;
  private readonly firstSeen = new FirstSeen();
  /** Which file each session id and claim resource came from, as of the last build. */
  private origins = { sessions: new Map<string, Origin>(), claims: new Map<string, Origin>() };
  private stopped = true;
  /** The first scan (with its second reads) is done: until then the state stays "connecting". */
  private ready = false;
  private builds = 0;
  /** What the look at the trash folder found (a mode tightened, a symlink refused). */
  private trashWarnings: readonly string[] = [];

  constructor(options: FileSourceOptions) {
    super(options.name, options.dir, options.now ?? Date.now);
    this.opts = options;
    const ctx: ParseContext = { source: options.name, host: options.host, firstSeen: (id, pid) => this.firstSeen.at(id, pid, this.now()), now: () => this.now() };
    this.dir = new WatchedDir<FileEntries>({
      dir: options.dir,
      accept: options.accept,
      parse: (body, name) => options.parse(body, name, ctx),
      onChange: () => this.build(),
      ...(options.retryMs !== undefined ? { retryMs: options.retryMs } : {}),
    });
    this.setEviction(
      options.trashDir !== undefined
        ? { available: true, ...this.evictionNotes() }
        : { available: false, why: options.readOnlyWhy ?? 'this source is read-only', ...this.evictionNotes() },
    );
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.setStatus('connecting');
    void this.checkTrash().then(() => this.dir.start()).then(() => {
      this.ready = true;
      this.build();
    });
  }

  /** The trash folder, looked at on start (not created): tightened when loose, refused (no eviction) when a symlink. */
  private async checkTrash(): Promise<void> {
    const trashDir = this.opts.trashDir;
    if (trashDir === undefined) return;
    try {
      this.trashWarnings = await checkTrashDir(trashDir, { create: false });
    } catch (error) {
      const why = fsErrorText(error);
      this.trashWarnings = [why];
      if (error instanceof UnsafePath) this.setEviction({ available: false, why, ...this.evictionNotes() });
    }
  }

  private evictionNotes(): { note: string | undefined; liveNote?: readonly string[] } {
    return { note: this.opts.evictNote, ...(this.opts.liveEvictNote ? { liveNote: this.opts.liveEvictNote } : {}) };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.dir.stop();
    this.setStatus('stopped');
  }

  /** Read the directory again; the lists are rebuilt once, by the rescan when it changed anything. */
  async resync(): Promise<void> {
    const before = this.builds;
    await this.dir.rescan();
    // Nothing changed: still a completed re-read, which the state (and eviction's re-check) counts.
    if (this.builds === before) this.build();
  }

  async evict(action: EvictionAction): Promise<RegistryAnswer> {
    const trashDir = this.opts.trashDir;
    if (trashDir === undefined) return { outcome: 'failed', error: this.opts.readOnlyWhy ?? 'this source is read-only' };
    const kind = action.type === 'deregister' ? 'session' : 'claim';
    const id = action.type === 'deregister' ? action.id : action.resource;
    const origin = (kind === 'session' ? this.origins.sessions : this.origins.claims).get(id);
    // Gone from the folder since the re-check read it: its rescan came in between.
    if (!origin) return { outcome: 'already-gone', detail: `no longer in ${sanitize(this.opts.dir, 200)} when it was to be moved (another process moved or removed its file)` };
    const companions = this.opts.companions;
    try {
      const along = companions ? await companions.files(origin.path) : [];
      const trashed = await moveToTrash(origin.path, origin.stamp, { source: this.name, kind, id }, trashDir, this.now, along);
      if (trashed.warnings.length > 0) this.trashWarnings = [...this.trashWarnings, ...trashed.warnings];
      // The record is evicted: what it named outside the folder is looked at now, and never un-does that.
      const after = companions ? await companions.afterMove(origin.raw, trashed.uid).catch((error: unknown) => `its companions were not looked at: ${fsErrorText(error)}`) : undefined;
      await this.resync();
      const detail = [
        `${movedText(origin.path, trashed.movedAlong)} to ${sanitize(trashed.entryDir, 200)} (ghostwatch restore ${sanitize(id, 80)} puts ${trashed.movedAlong.length > 0 ? 'them' : 'it'} back)`,
        ...trashed.left.map((l) => `left ${sanitize(l.path, 200)}: ${sanitize(l.why, 200)}`),
        ...trashed.kept.map((k) => sanitize(k, 400)),
        ...(after ? [sanitize(after, 400)] : []),
        ...trashed.warnings.map((w) => sanitize(w, 200)),
      ];
      return { outcome: 'evicted', detail: detail.join('; ') };
    } catch (error) {
      const err = error as NodeJS.ErrnoException;
      if (err.code === 'ENOENT' && err.path === origin.path) {
        // Read a moment ago, gone now: moved or removed by another process (another ghostwatch, Claude Code itself).
        return { outcome: 'already-gone', detail: `${sanitize(origin.path, 200)} was gone when it was to be moved (another process moved or removed it)` };
      }
      if (error instanceof FileChanged) {
        const after = error.keptAt ? `; ghostwatch restore ${sanitize(id, 80)} puts it back` : '; nothing was moved, look again';
        return { outcome: 'refused', error: `${sanitize(error.message, 400)}${after}` };
      }
      if (error instanceof UnsafePath) return { outcome: 'refused', error: `${sanitize(error.message, 300)}; nothing was moved` };
      return { outcome: 'failed', error: `${sanitize(fsErrorText(error), 200)}: nothing was moved` };
    }
  }

  /** Every file's entries, in file-name order, with ids made unique; the state line from the directory. */
  private build(): void {
    if (this.stopped) return;
    this.builds++;
    const files = [...this.dir.files().values()];
    const sessions: SessionEntry[] = [];
    const claims: ClaimEntry[] = [];
    const origins = { sessions: new Map<string, Origin>(), claims: new Map<string, Origin>() };
    const warnings: string[] = [...this.trashWarnings];
    // The newest file keeps the plain id; older files naming the same session are marked with their file name.
    const newestFirst = [...files].sort((a, b) => b.mtimeMs - a.mtimeMs);
    const ownerOf = newestOwners(newestFirst, (v) => v.sessions.map((x) => x.id));
    const claimOwner = newestOwners(newestFirst, (v) => v.claims.map((x) => x.resource));

    for (const f of files) {
      if (f.warning) warnings.push(f.warning);
      const origin = { path: f.path, stamp: f.stamp };
      for (const s of f.value?.sessions ?? []) {
        const entry = ownerOf.get(s.id) === f ? s : relabel(s, `${s.id}~${f.name}`);
        if (origins.sessions.has(entry.id)) continue;
        origins.sessions.set(entry.id, { ...origin, raw: s.raw });
        sessions.push(entry);
      }
      for (const c of f.value?.claims ?? []) {
        const claim = claimOwner.get(c.resource) === f ? c : { ...c, resource: `${c.resource}~${f.name}` };
        if (origins.claims.has(claim.resource)) continue;
        origins.claims.set(claim.resource, origin);
        claims.push(claim);
      }
    }
    this.firstSeen.keepOnly(origins.sessions);
    this.origins = origins;
    if (!this.ready) {
      // Lists stay unpublished until the first scan is whole: a half-read directory is not a snapshot.
      return;
    } else if (this.dir.present === false) {
      this.setStatus(this.dir.error ? 'unreachable' : 'absent', this.dir.error ?? `no ${this.opts.dir} yet (watching for it)`);
    } else if (this.dir.present && this.opts.singleFile !== undefined && files.length === 0) {
      this.setStatus('absent', `no ${this.opts.singleFile} in ${this.opts.dir} yet (watching for it)`);
    } else if (this.dir.present) {
      this.setStatus('watching', this.dir.error ?? '');
    }
    this.applyRead({ sessions, claims, warnings });
  }
}

/** "moved /…/123.json", or "moved /…/123.json with its file 123.<sha256>.key" (Claude's key files). */
function movedText(path: string, along: readonly string[]): string {
  const moved = `moved ${sanitize(path, 200)}`;
  if (along.length === 0) return moved;
  return `${moved} with ${along.length === 1 ? 'its file' : `its ${along.length} files`} ${along.map((p) => sanitize(basename(p), 120)).join(', ')}`;
}

/** For each id, the newest file that names it. */
function newestOwners(newestFirst: readonly FileReading<FileEntries>[], idsOf: (v: FileEntries) => readonly string[]): Map<string, FileReading<FileEntries>> {
  const owners = new Map<string, FileReading<FileEntries>>();
  for (const f of newestFirst) for (const id of f.value ? idsOf(f.value) : []) if (!owners.has(id)) owners.set(id, f);
  return owners;
}

/** A copy under another id; the firstObservedAt and raw record stay. Built as one literal (see reconcile). */
function relabel(s: SessionEntry, id: string): SessionEntry {
  return {
    source: s.source,
    id,
    machine: s.machine,
    cwd: s.cwd,
    port: s.port,
    pid: s.pid,
    offline: s.offline,
    ended: s.ended,
    cleanup: s.cleanup,
    epermCountsDead: s.epermCountsDead,
    status: s.status,
    lastSeen: s.lastSeen,
    offlineSince: s.offlineSince,
    registeredAt: s.registeredAt,
    pidStartedAt: s.pidStartedAt,
    pidStartTicks: s.pidStartTicks,
    pidDomain: s.pidDomain,
    sessionId: s.sessionId,
    firstObservedAt: s.firstObservedAt,
    joinSeq: s.joinSeq,
    invalidTimes: s.invalidTimes,
    raw: s.raw,
  };
}

export const CLAUDE_VIEW_READ_ONLY =
  "claude-view rewrites live-monitor-pids.json on its own every 10 s; ghostwatch does not edit another tool's snapshot";

/**
 * `--source claude`: per Claude Code folder its sessions and claude-view's snapshot, and the claim
 * manager's folder once; each its own source with its own state line, its folder as its url.
 */
export function claudeSources(paths: ClaudePaths, host: string, trashDir: string, now?: () => number): FileSource[] {
  const json = (name: string): boolean => name.endsWith('.json') && !name.startsWith('.');
  const common = { host, ...(now ? { now } : {}) };
  const suffixes = folderSuffixes(paths.claudeDirs);
  const sources: FileSource[] = [];
  paths.claudeDirs.forEach((claudeDir, i) => {
    const name = `claude${suffixes[i]}`;
    sources.push(
      new FileSource({
        ...common,
        name,
        dir: join(claudeDir, 'sessions'),
        accept: json,
        parse: parseClaudeSession,
        trashDir,
        ...CLAUDE_SESSION_EVICTION,
        evictNote: `${name}: the session file and its key files go to the ghostwatch trash (restore puts them back); a dead messaging socket is removed`,
      }),
    );
  });
  paths.claudeDirs.forEach((claudeDir, i) => {
    if (paths.snapshotDirs !== undefined && !paths.snapshotDirs.includes(claudeDir)) return;
    sources.push(
      new FileSource({
        ...common,
        name: `claude-view${suffixes[i]}`,
        dir: claudeDir,
        accept: (name) => name === 'live-monitor-pids.json',
        singleFile: 'live-monitor-pids.json',
        parse: parseLiveMonitor,
        readOnlyWhy: CLAUDE_VIEW_READ_ONLY,
      }),
    );
  });
  if (paths.claimsDir !== undefined) {
    sources.push(
      new FileSource({
        ...common,
        name: 'claude-sessions',
        dir: paths.claimsDir,
        accept: json,
        parse: parseClaimSession,
        trashDir,
        evictNote: 'claude-sessions: eviction moves the whole session file, its claim with it, to the ghostwatch trash',
      }),
    );
  }
  return sources;
}
