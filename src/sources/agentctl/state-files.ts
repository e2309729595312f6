// agentctl's state.json and locks.json, read when its daemon is down. Read-only: agentctl
// writes them atomically (tmp + rename), so a read sees a whole file or none, and rewrites
// them when it starts.

import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { sanitize } from '../../core/sanitize.js';
import { fsErrorText, readBoundedSync } from '../../os/safe-file.js';
import { stateFileRecords } from './wire.js';

/** state.json only grows (agentctl deletes nothing), but not past this. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

export type StateFiles =
  /** No such folder: agentctl is not installed here. */
  | { readonly kind: 'absent' }
  /** The folder is there, the files are not. */
  | { readonly kind: 'missing'; readonly why: string }
  /** Same mtimes and sizes as the read stamped `lastStamp`. */
  | { readonly kind: 'same' }
  | { readonly kind: 'read'; readonly stamp: string; readonly records: readonly unknown[]; readonly locks: readonly unknown[]; readonly warnings: string[] };

export async function readStateFiles(dir: string, lastStamp: string): Promise<StateFiles> {
  const statePath = join(dir, 'state.json');
  const locksPath = join(dir, 'locks.json');
  const [stateStat, locksStat] = await Promise.all([stat(statePath).catch(() => undefined), stat(locksPath).catch(() => undefined)]);
  if (!stateStat && !locksStat) {
    const dirThere = await stat(dir).then(() => true, () => false);
    return dirThere ? { kind: 'missing', why: `no state.json or locks.json in ${dir}` } : { kind: 'absent' };
  }
  const stamp = `${stateStat?.mtimeMs}:${stateStat?.size}:${locksStat?.mtimeMs}:${locksStat?.size}`;
  if (stamp === lastStamp) return { kind: 'same' };
  const warnings: string[] = [];
  const state = await readJson(statePath, warnings);
  const locks = await readJson(locksPath, warnings);
  const records = state === undefined ? [] : stateFileRecords(state);
  if (state !== undefined && !records) warnings.push(`${statePath}: no "sessions" object`);
  if (locks !== undefined && !Array.isArray(locks)) warnings.push(`${locksPath}: not a list of locks`);
  return { kind: 'read', stamp, records: records ?? [], locks: Array.isArray(locks) ? locks : [], warnings };
}

async function readJson(path: string, warnings: string[]): Promise<unknown> {
  let text: string;
  try {
    // Bounded, never through a symlink or into a FIFO: agentctl writes these by tmp + rename.
    text = readBoundedSync(path, MAX_FILE_BYTES, { noFollow: true }).toString('utf8');
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'ENOENT') warnings.push(sanitize(`${path}: cannot read it (${fsErrorText(error)})`, 300));
    return undefined;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    warnings.push(`${path}: not valid JSON (${(error as Error).message})`);
    return undefined;
  }
}
