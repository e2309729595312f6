// `--state-file`: a JSON snapshot written atomically after changes and read back on start,
// so a restarted registry still knows its nodes (as offline) and can tell ghosts apart. It is
// read back only when it is ours (readOwnFileSync): another user's file is never loaded.
import { hostname } from 'node:os';
import { isUsablePid } from '../core/pid.js';
import { matchHost } from '../core/host.js';
import { sanitize } from '../core/sanitize.js';
import { invalidTimesText, type InvalidTime } from '../core/time.js';
import { probePids } from '../os/liveness.js';
import { readOwnFileSync, UnsafePath, writeFileAtomicSync } from '../os/safe-file.js';
import { parseClaim, parseNodeInfo, type Claim, type NodeInfo } from './protocol.js';

export interface StateSnapshot {
  version: 1;
  nodes: NodeInfo[];
  claims: Claim[];
}

export interface LoadOptions {
  readonly log: (line: string) => void;
  /** This host's name, for deciding which pids can be checked here (default os.hostname()). */
  readonly hostName?: string;
  /** Unix ms, the clock its times are held against (default Date.now). */
  readonly now?: () => number;
}

/** A snapshot of 100,000 nodes is some 30 MB: a file larger than this is not a state file. */
export const MAX_STATE_FILE_BYTES = 64 * 1024 * 1024;

function errorText(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return err instanceof Error ? err.message : String(err);
}

/**
 * The snapshot at `path` without the local entries whose process is gone (ESRCH), or an empty
 * one when the file is missing, unreadable or malformed. Never throws.
 */
export async function loadStateFile(path: string, opts: LoadOptions): Promise<StateSnapshot> {
  const empty: StateSnapshot = { version: 1, nodes: [], claims: [] };
  const where = `serve: state file ${sanitize(path)}`;
  let text: string;
  try {
    text = readOwnFileSync(path, MAX_STATE_FILE_BYTES).toString('utf8');
  } catch (err) {
    if (err instanceof UnsafePath) opts.log(`${where}: not used (${sanitize(err.message)}), starting empty`);
    else if (errorText(err) !== 'ENOENT') opts.log(`${where}: unreadable (${sanitize(errorText(err))}), starting empty`);
    return empty;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    opts.log(`${where}: not valid JSON, starting empty`);
    return empty;
  }
  const record = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
  if (record.version !== 1 || !Array.isArray(record.nodes) || !Array.isArray(record.claims)) {
    opts.log(`${where}: not a version 1 snapshot, starting empty`);
    return empty;
  }
  const nodes: NodeInfo[] = [];
  const nowMs = (opts.now ?? Date.now)();
  for (const raw of record.nodes) {
    const invalid: InvalidTime[] = [];
    const node = parseNodeInfo(raw, nowMs, invalid);
    if (node) nodes.push(node);
    else opts.log(`${where}: skipped an entry that is not a NodeInfo`);
    if (node && invalid.length > 0) opts.log(`${where}: ${sanitize(node.id)}: not kept, no time within 100 years of now: ${sanitize(invalidTimesText(invalid))}`);
  }
  const host = opts.hostName ?? hostname();
  const dead = await deadLocalPids(nodes, host);
  const kept = nodes.filter((node) => {
    if (node.pid === undefined || !dead.has(node.pid) || !isLocal(node, host)) return true;
    opts.log(`${where}: dropped ${sanitize(node.id)} ${sanitize(node.machine)}:${node.port} pid ${node.pid} (process gone)`);
    return false;
  });
  const ids = new Set(kept.map((n) => n.id));
  const claims: Claim[] = [];
  for (const raw of record.claims) {
    const invalid: InvalidTime[] = [];
    const claim = parseClaim(raw, nowMs, invalid);
    if (claim && ids.has(claim.holder)) claims.push(claim);
    else if (claim) opts.log(`${where}: dropped claim ${sanitize(claim.resource)} (holder ${sanitize(claim.holder)} is gone)`);
    else if (invalid.length > 0) opts.log(`${where}: skipped a claim whose time is none within 100 years of now: ${sanitize(invalidTimesText(invalid))}`);
    else opts.log(`${where}: skipped an entry that is not a claim`);
  }
  return { version: 1, nodes: kept, claims };
}

function isLocal(node: NodeInfo, host: string): boolean {
  return matchHost(node.machine, host, []) !== undefined;
}

async function deadLocalPids(nodes: readonly NodeInfo[], host: string): Promise<Set<number>> {
  const pids = nodes.filter((n) => isLocal(n, host) && isUsablePid(n.pid)).map((n) => n.pid as number);
  const facts = await probePids(pids);
  return new Set([...facts.values()].filter((f) => f.kill === 'ESRCH').map((f) => f.pid));
}

export interface StateWriterOptions {
  readonly log: (line: string) => void;
  /** At most one write per this many ms; bursts of changes coalesce into one write. */
  readonly coalesceMs?: number;
}

/**
 * Writes snapshots to `path` atomically: a fresh temp file in the same folder, created
 * O_CREAT|O_EXCL|O_NOFOLLOW with mode 0600 (never an existing name, never through a symlink),
 * synced, then renamed over.
 */
export class StateFileWriter {
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;
  private failing = false;
  private readonly coalesceMs: number;

  constructor(
    private readonly path: string,
    private readonly snapshot: () => StateSnapshot,
    private readonly opts: StateWriterOptions,
  ) {
    this.coalesceMs = opts.coalesceMs ?? 100;
  }

  /** Something changed: write soon, once for the whole burst. */
  schedule(): void {
    this.dirty = true;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.coalesceMs);
    this.timer.unref();
  }

  /** Writes now if anything changed since the last write. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.dirty) return;
    this.dirty = false;
    try {
      writeFileAtomicSync(this.path, `${JSON.stringify(this.snapshot(), null, 2)}\n`, 0o600);
      if (this.failing) this.opts.log(`serve: state file ${sanitize(this.path)}: writing again`);
      this.failing = false;
    } catch (err) {
      // One line per failure streak, not one per change.
      if (!this.failing) this.opts.log(`serve: state file ${sanitize(this.path)}: cannot write (${sanitize(errorText(err))})`);
      this.failing = true;
    }
  }
}
