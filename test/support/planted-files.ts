// Files another user planted where ghostwatch reads its own (view.json, config.json, serve's state
// file, trash notes): real files, a real other user (uid 65534, by chown or written through
// setpriv), a symlink to a file of ours, modes that let others write. Each planting makes its own
// folder, as the reader finds it; `ownFile` is the one that must still be read.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isLinux } from './processes.js';

export const OTHER_UID = 65534;

/** Why files cannot be planted as another user here (chown and setpriv need root on Linux), or undefined. */
export function plantingRequirement(): string | undefined {
  if (!isLinux) return 'needs Linux (setpriv)';
  if (process.getuid?.() !== 0) return 'needs root (to chown a file to uid 65534 and write one as it)';
  return undefined;
}

export interface Planting {
  /** What was planted, for the test's name. */
  readonly how: string;
  /** The reason the reader must give. */
  readonly why: RegExp;
  /** Makes `folder` (its parents exist, searchable by others: 0755) and `name` in it holding `text`; returns the file's path. */
  readonly plant: (folder: string, name: string, text: string) => string;
}

function folderOf(folder: string, mode: number): void {
  mkdirSync(folder, { recursive: true });
  chmodSync(folder, mode); // explicit: the umask does not decide
}

function fileOf(path: string, text: string, mode: number): string {
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

export const PLANTINGS: readonly Planting[] = [
  {
    how: 'owned by uid 65534 (chown)',
    why: /belongs to uid 65534, not to uid 0/,
    plant: (folder, name, text) => {
      folderOf(folder, 0o700);
      const path = fileOf(join(folder, name), text, 0o600);
      chownSync(path, OTHER_UID, OTHER_UID);
      return path;
    },
  },
  {
    how: 'written by uid 65534 (setpriv) in a folder anyone may write to, like /tmp (1777)',
    why: /belongs to uid 65534, not to uid 0/,
    plant: (folder, name, text) => {
      folderOf(folder, 0o1777);
      const path = join(folder, name);
      execFileSync('setpriv', [`--reuid=${OTHER_UID}`, `--regid=${OTHER_UID}`, '--clear-groups', 'sh', '-c', 'umask 077; printf %s "$1" > "$2"', 'sh', text, path]);
      return path;
    },
  },
  {
    how: 'a symlink to a file of ours',
    why: /symbolic link/,
    plant: (folder, name, text) => {
      folderOf(folder, 0o700);
      const real = fileOf(join(folder, `${name}.target`), text, 0o600);
      const path = join(folder, name);
      symlinkSync(real, path);
      return path;
    },
  },
  {
    how: 'group-writable (0664)',
    why: /writable by its group \(mode 0664/,
    plant: (folder, name, text) => {
      folderOf(folder, 0o700);
      return fileOf(join(folder, name), text, 0o664);
    },
  },
  {
    how: 'ours, in a group-writable folder (0770)',
    why: /its folder .* is writable by its group \(mode 0770/,
    plant: (folder, name, text) => {
      folderOf(folder, 0o770);
      return fileOf(join(folder, name), text, 0o600);
    },
  },
  {
    how: 'ours, in a world-writable folder (0777)',
    why: /its folder .* is writable by others \(mode 0777/,
    plant: (folder, name, text) => {
      folderOf(folder, 0o777);
      return fileOf(join(folder, name), text, 0o600);
    },
  },
];

/** Our own 0600 file in our own 0700 folder: what ghostwatch must go on reading. */
export function ownFile(folder: string, name: string, text: string): string {
  folderOf(folder, 0o700);
  return fileOf(join(folder, name), text, 0o600);
}
