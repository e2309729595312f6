// A fake `ssh` client for tests: it runs the real probe loop (its last argument) under this
// machine's sh, with a `hostname` on its PATH that answers the destination's name, so a "remote"
// host's pids are this machine's, real ones. Destinations noauth* fail as a refused key does,
// cap-* as an unknown host; anything but a plain name is refused. Each destination asked for is
// logged, one a line.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The client is `<dir>/ssh` (put `dir` first on PATH for the CLI); `dests()` lists what it was asked for. */
export function fakeSsh(): { dir: string; command: string; dests(): string[] } {
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
printf '#!/bin/sh\\necho %s\\n' "$prev" > "$d/as/$prev/hostname"
chmod +x "$d/as/$prev/hostname"
PATH="$d/as/$prev:$PATH" exec sh -c "$last"
`,
  );
  chmodSync(command, 0o755);
  const log = join(dir, 'dests');
  return { dir, command, dests: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((l) => l !== '') : []) };
}

