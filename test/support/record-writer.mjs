// A stand-in for a new Claude Code process that got a dead session's pid (pid reuse): it writes its
// own `<pid>.json` at the name the ghost's record has, again and again, each time a new file (a new
// inode, new content), while ghostwatch moves that name into its trash. Run as its own process:
// `node record-writer.mjs`; it reads commands on stdin, one a line:
//   go <folder> <ms>       start replacing <folder>/records/4242.json after a wait of 0 to <ms> ms
//   go <folder> pounce     start the moment the record is touched: linked elsewhere (its link
//                          count rises) or moved away (gone); after 100 ms at the latest
//   stop                   finish the replacement under way, then print "stopped <versions placed>"
// Each version is written first as <folder>/witness/v<n> (a hard link that keeps every version it
// wrote, so a test can find each one) and placed at the record's name by link(), which never
// overwrites. The version that stood there is first renamed into <folder>/graveyard/: what the
// writer displaced it keeps, so every version it ever placed is at the record's name, in the
// graveyard, or wherever someone else put it — in the trash, if nobody destroys one. A version that
// could not be placed (the name was taken again meanwhile) is removed from the witness folder.
// Plain JS (no build step) so a test can start it with node.
import { linkSync, lstatSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

let folder;
let placed = 0;
let running = false;
let stopAsked = false;

const recordPath = () => join(folder, 'records', '4242.json');

/** Version n written (not yet placed): its path. */
function prepare(n) {
  const version = join(folder, 'witness', `v${n}`);
  writeFileSync(version, JSON.stringify({ pid: 4242, sessionId: `new-process-${n}`, version: n, startedAt: Date.now() }));
  return version;
}

/** The version at the record's name displaced into the graveyard, `version` placed there. */
function place(n, version) {
  try {
    renameSync(recordPath(), join(folder, 'graveyard', `displaced-${n}`));
  } catch (error) {
    if (error.code !== 'ENOENT') throw error; // the name is free: it was moved away
  }
  try {
    linkSync(version, recordPath());
    placed++;
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
    unlinkSync(version); // never on disk at the record's name: not one of the versions to account for
  }
}

function loop(n, ready) {
  if (stopAsked) {
    running = false;
    process.stdout.write(`stopped ${placed}\n`);
    return;
  }
  // As fast as it can: four replacements, then stdin is read (a stop) before the next four.
  place(n, ready ?? prepare(n));
  for (let i = 1; i < 4; i++) place(n + i, prepare(n + i));
  setImmediate(() => loop(n + 4));
}

/** Spun, not waited: returns the moment the record is linked elsewhere or gone (or after `ms`). */
function untilTouched(ms) {
  const first = lstatSync(recordPath(), { throwIfNoEntry: false });
  const end = performance.now() + ms;
  while (first && performance.now() < end) {
    const now = lstatSync(recordPath(), { throwIfNoEntry: false });
    if (!now || now.ino !== first.ino || now.nlink !== first.nlink) return;
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const [command, arg, start] = line.split(' ');
  if (command === 'go' && !running) {
    folder = arg;
    placed = 0;
    stopAsked = false;
    running = true;
    if (start === 'pounce') {
      // The first version is written before: once touched, only the rename and the link are left to do.
      const first = prepare(1);
      untilTouched(100);
      loop(1, first);
    } else {
      // The first wait, spun: the first replacement lands anywhere in a move, or after it.
      const begin = performance.now();
      const wait = Math.random() * Number(start ?? 0);
      while (performance.now() - begin < wait);
      loop(1);
    }
  } else if (command === 'stop') {
    if (running) stopAsked = true;
    else process.stdout.write(`stopped ${placed}\n`);
  }
});
process.stdout.write('ready\n');
