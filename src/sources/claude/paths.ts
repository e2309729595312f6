// Where Claude Code keeps its files, and how the sources of several folders are told apart. Only
// looks (stat, realpath): nothing here reads a session file.

import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';

export interface ClaudePaths {
  /**
   * The Claude Code folders (profiles), in order: the first one's sources are named `claude` and
   * `claude-view`, each other's `claude:<folder>` and `claude-view:<folder>` (its base name).
   */
  readonly claudeDirs: readonly string[];
  /** The claim manager's folder (default ~/.claude-sessions); undefined: not read. */
  readonly claimsDir?: string | undefined;
  /** The folders whose claude-view snapshot is read; undefined: every one of claudeDirs. */
  readonly snapshotDirs?: readonly string[] | undefined;
}

/**
 * Where Claude Code keeps its files: `$CLAUDE_CONFIG_DIR` when set, and ~/.claude too when it is
 * there and is another folder (an older profile, or sessions started without the variable).
 */
export function defaultClaudePaths(home: string = homedir(), env: NodeJS.ProcessEnv = process.env): ClaudePaths {
  const plain = join(home, '.claude');
  const configured = env.CLAUDE_CONFIG_DIR ? resolve(env.CLAUDE_CONFIG_DIR) : undefined;
  const claudeDirs = configured === undefined ? [plain] : isDir(plain) && !sameDir(configured, plain) ? [configured, plain] : [configured];
  return { claudeDirs, claimsDir: join(home, '.claude-sessions') };
}

export function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The same folder, by its real path when both exist (a symlinked profile), else by its path. */
function sameDir(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return resolve(a) === resolve(b);
  }
}

/** Each folder's part of a source name: '' for the first, `:<base name>` (made unique, plain characters) for the others. */
export function folderSuffixes(dirs: readonly string[]): string[] {
  const used = new Set<string>();
  return dirs.map((dir, i) => {
    if (i === 0) return '';
    const base = basename(resolve(dir)).replace(/^\.+/, '').replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 16) || 'folder';
    let label = base;
    for (let n = 2; used.has(label); n++) label = `${base}-${n}`;
    used.add(label);
    return `:${label}`;
  });
}
