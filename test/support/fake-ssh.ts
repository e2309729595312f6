// A fake `ssh` client for tests: it runs the real probe loop (its last argument) under this
// machine's sh, with a `hostname` on its PATH that answers the destination's name, so a "remote"
// host's pids are this machine's, real ones. Destinations noauth* fail as a refused key does,
// cap-* as an unknown host; anything but a plain name is refused. Each destination asked for is
// logged, one a line. A flood-* destination also runs a flooder beside its loop, on the same
// stdout: while the file flood() writes exists, it prints that file's lines over and over, one
// write a line, as a runaway watcher would; calm() removes the file and the flooder ends.
import { chmodSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

export interface FakeSsh {
  readonly dir: string;
  readonly command: string;
  /** Every destination it was asked for, in order. */
  dests(): string[];
  /** The flood-* hosts start printing these lines over and over (each a line of its own). */
  flood(lines: readonly string[]): void;
  /** The flooders stop. */
  calm(): void;
}

/** The client is `<dir>/ssh` (put `dir` first on PATH for the CLI); `dests()` lists what it was asked for. */
export function fakeSsh(): FakeSsh {
  const dir = mkdtempSync(join(tmpdir(), 'gw-fake-ssh-'));
  dirs.push(dir);
  const command = join(dir, 'ssh');
  writeFileSync(
    command,
    `#!/bin/sh
d='${dir}'
for a; do prev=$last; last=$a; done
printf '%s\\n' "$prev" >> "$d/dests"
case $prev in
noauth*) echo "me@$prev: Permission denied (publickey)." >&2; exit 255;;
cap-*) echo "ssh: Could not resolve hostname $prev: Name or service not known" >&2; exit 255;;
*[!A-Za-z0-9.-]*) echo "ssh: not a name this fake takes" >&2; exit 255;;
esac
mkdir -p "$d/as/$prev"
case $prev in flood*)
  # Waits for the flood file while the loop ($$ once exec'd) runs, then prints it while it exists.
  (while [ ! -e "$d/flood" ]; do kill -0 $$ 2>/dev/null || exit 0; sleep 0.05; done
   while [ -e "$d/flood" ] && kill -0 $$ 2>/dev/null; do
     while IFS= read -r l; do printf '%s\\n' "$l"; done < "$d/flood" 2>/dev/null
   done) &
esac
printf '#!/bin/sh\\necho %s\\n' "$prev" > "$d/as/$prev/hostname"
chmod +x "$d/as/$prev/hostname"
PATH="$d/as/$prev:$PATH" exec sh -c "$last"
`,
  );
  chmodSync(command, 0o755);
  const log = join(dir, 'dests');
  const floodFile = join(dir, 'flood');
  return {
    dir,
    command,
    dests: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((l) => l !== '') : []),
    flood(lines) {
      // Whole at once: a flooder never reads half a file.
      writeFileSync(`${floodFile}.tmp`, lines.map((l) => `${l}\n`).join(''));
      renameSync(`${floodFile}.tmp`, floodFile);
    },
    calm: () => rmSync(floodFile, { force: true }),
  };
}

