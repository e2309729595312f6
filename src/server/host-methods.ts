// The two methods of hypivisor that touch the host rather than the registry, for Pi-DE's spawn
// dialog: `list_directories` (a folder browser confined to $HOME) and `spawn_agent` (start `pi`
// in a folder inside $HOME; refused unless serve was started with --allow-spawn; agent-spawner.ts
// starts it and answers once it registered).
import { existsSync, mkdirSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { errorOf, resultOf, type RpcResponse } from './protocol.js';

export interface HostMethodOptions {
  /** The directory both methods are confined to ($HOME). */
  readonly homeDir: string;
  /** spawn_agent is refused unless this is true. */
  readonly allowSpawn: boolean;
  /** Starts spawn_agent's agent in a validated folder and says whether it registered. */
  readonly spawner: { start(path: string): Promise<{ readonly ok: true } | { readonly ok: false; readonly error: string }> };
}

export const SPAWN_DISABLED = 'spawn_agent is disabled: start ghostwatch serve with --allow-spawn to allow it';
/**
 * One answer for a path that is missing, unreadable or outside $HOME (hypivisor tells them apart,
 * which tells anyone who may connect whether a path outside home exists).
 */
export const NOT_IN_HOME = 'Path does not exist or resolves outside home directory';

/**
 * An OS error as hypivisor (Rust's io::Error) words it: "No such file or directory (os error 2)".
 * Node's message starts "ENOENT: no such file or directory, realpath '…'".
 */
export function osErrorText(err: unknown): string {
  const e = err as { code?: unknown; errno?: unknown; message?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const code = typeof e?.code === 'string' ? e.code : undefined;
  let text = message;
  if (code !== undefined && message.startsWith(`${code}: `)) {
    text = message.slice(code.length + 2);
    const comma = text.lastIndexOf(', ');
    if (comma !== -1) text = text.slice(0, comma);
  }
  text = text.charAt(0).toUpperCase() + text.slice(1);
  return typeof e?.errno === 'number' ? `${text} (os error ${Math.abs(e.errno)})` : text;
}

function field(params: unknown, name: string): unknown {
  return typeof params === 'object' && params !== null && !Array.isArray(params) ? (params as Record<string, unknown>)[name] : undefined;
}

/** $HOME with its symlinks resolved, so a canonical path can be compared with it. */
function canonicalHome(homeDir: string): string {
  try {
    return realpathSync(homeDir);
  } catch {
    return resolve(homeDir);
  }
}

/** Component-wise, as Rust's Path::starts_with: /home/bob2 is not inside /home/bob. */
export function isInside(path: string, home: string): boolean {
  if (path === home) return true;
  return path.startsWith(home.endsWith(sep) ? home : home + sep);
}

/** realpath, except that '' is an error as it is for Rust's canonicalize (Node answers the cwd). */
function canonicalize(path: string): string {
  if (path === '') throw Object.assign(new Error("ENOENT: no such file or directory, realpath ''"), { code: 'ENOENT', errno: -2 });
  return realpathSync(path);
}

/** UTF-8 byte order, as Rust sorts its Strings (JS's default sort compares UTF-16 units). */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

export function listDirectories(id: string | undefined, params: unknown, opts: HostMethodOptions): RpcResponse {
  const home = canonicalHome(opts.homeDir);
  const asked = field(params, 'path');
  const target = typeof asked === 'string' ? asked : home;
  let current: string;
  try {
    current = canonicalize(target);
  } catch {
    return errorOf(id, NOT_IN_HOME);
  }
  if (!isInside(current, home)) return errorOf(id, NOT_IN_HOME);
  let entries;
  try {
    entries = readdirSync(current, { withFileTypes: true });
  } catch (err) {
    return errorOf(id, `Cannot read directory: ${osErrorText(err)}`);
  }
  const directories: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const full = join(current, entry.name);
    try {
      if (entry.isSymbolicLink()) {
        // Listed only when what it points to is a directory that stays inside $HOME.
        const resolved = realpathSync(full);
        if (!isInside(resolved, home) || !statSync(resolved).isDirectory()) continue;
      } else if (!entry.isDirectory()) {
        continue;
      }
    } catch {
      continue; // a dangling link, or an entry that vanished meanwhile
    }
    directories.push(entry.name);
  }
  directories.sort(byteOrder);
  return resultOf(id, { current, directories });
}

/** The deepest ancestor of `path` (itself included) that exists. */
function existingAncestor(path: string): string {
  let at = path;
  while (!existsSync(at)) {
    const up = dirname(at);
    if (up === at) break;
    at = up;
  }
  return at;
}

/**
 * The canonical directory spawn_agent would start in, creating `new_folder` first, or the error
 * string. Unlike hypivisor, a new folder is only created when it would land inside $HOME.
 */
export function validateSpawnPath(pathText: string, newFolderText: string, homeDir: string): { path: string } | { error: string } {
  const home = canonicalHome(homeDir);
  const newFolder = newFolderText.trim();
  const target = newFolder === '' ? pathText : resolve(pathText, newFolder);
  if (target === '' || !existsSync(target)) {
    if (newFolder === '') return { error: NOT_IN_HOME };
    let base: string;
    try {
      base = realpathSync(existingAncestor(target));
    } catch {
      return { error: NOT_IN_HOME };
    }
    if (!isInside(base, home)) return { error: NOT_IN_HOME };
    try {
      mkdirSync(target, { recursive: true });
    } catch (err) {
      return { error: `Failed to create directory: ${osErrorText(err)}` };
    }
  }
  let canonical: string;
  try {
    canonical = canonicalize(target);
  } catch {
    return { error: NOT_IN_HOME };
  }
  if (!isInside(canonical, home)) return { error: NOT_IN_HOME };
  try {
    if (!statSync(canonical).isDirectory()) return { error: 'Failed to spawn: Not a directory (os error 20)' };
  } catch (err) {
    return { error: `Invalid path: ${osErrorText(err)}` };
  }
  return { path: canonical };
}

/** Starts the agent once the path is valid; the reply waits until it registered (or ended: an error). */
export async function spawnAgent(id: string | undefined, params: unknown, opts: HostMethodOptions): Promise<RpcResponse> {
  if (!opts.allowSpawn) return errorOf(id, SPAWN_DISABLED);
  if (params === undefined) return errorOf(id, 'Missing params');
  const path = field(params, 'path');
  const newFolder = field(params, 'new_folder');
  const valid = validateSpawnPath(typeof path === 'string' ? path : '', typeof newFolder === 'string' ? newFolder : '', opts.homeDir);
  if ('error' in valid) return errorOf(id, valid.error);
  const outcome = await opts.spawner.start(valid.path);
  if (!outcome.ok) return errorOf(id, `Failed to spawn: ${outcome.error}`);
  return resultOf(id, { status: 'spawning', path: valid.path });
}
