// This test process's open sockets, by inode (/proc/self/fd): a client a test starts opens one
// more, and closing it removes it, whatever the client reports about itself. Linux.
import { readdirSync, readlinkSync } from 'node:fs';

export function ownSockets(): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

/** A socket open now that was not in `before`: its inode. */
export function newSocket(before: ReadonlySet<string>): string | undefined {
  return [...ownSockets()].find((i) => !before.has(i));
}
