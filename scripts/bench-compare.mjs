// `npm run bench:compare -- <rev> [--only group,group] [--rounds N]`: the bench of an older commit
// and of this tree, side by side, in one run on one machine. The older commit is checked out into
// a temporary git worktree (sharing this node_modules) and built; then each bench group runs
// against the old build and the new one, alternately, so a noisy minute hits both. A figure more
// than 10 % worse (in its own direction: lower is better unless its target says >=) is marked.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const GROUPS = ['core', 'os', 'sources', 'serve', 'cli', 'ui', 'detect', 'idle', 'verdict', 'ssh-flood', 'costs'];
/** Groups that measure only a launcher (GHOSTWATCH_BENCH_BIN): this tree's bench runs them against both builds, so a figure new here has a before. */
const LAUNCHER_GROUPS = new Set(['verdict', 'ssh-flood']);
const args = process.argv.slice(2);
const rev = args.find((a, i) => !a.startsWith('--') && !['--only', '--rounds'].includes(args[i - 1] ?? ''));
if (!rev) {
  process.stderr.write('bench:compare: name the older commit: npm run bench:compare -- <rev>\n');
  process.exit(2);
}
const onlyAt = args.indexOf('--only');
const groups = onlyAt >= 0 ? String(args[onlyAt + 1] ?? '').split(',').filter((g) => GROUPS.includes(g)) : GROUPS;
const roundsAt = args.indexOf('--rounds');
const rounds = roundsAt >= 0 ? Math.max(1, Number(args[roundsAt + 1]) || 1) : 1;

const root = resolve(new URL('..', import.meta.url).pathname);
const git = (...a) => execFileSync('git', a, { cwd: root, encoding: 'utf8' }).trim();
const sha = git('rev-parse', '--verify', `${rev}^{commit}`);
const here = git('rev-parse', '--short', 'HEAD') + (git('status', '--porcelain', '--untracked-files=no') ? '+changes' : '');

const old = join(mkdtempSync(join(tmpdir(), 'ghostwatch-bench-')), 'tree');
git('worktree', 'add', '--detach', old, sha);
const cleanup = () => {
  try {
    git('worktree', 'remove', '--force', old);
  } catch {
    rmSync(old, { recursive: true, force: true });
  }
};
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});

try {
  symlinkSync(join(root, 'node_modules'), join(old, 'node_modules'));
  for (const dir of [old, root]) {
    const b = spawnSync('npm', ['run', '--silent', 'build'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
    if (b.status !== 0) throw new Error(`build failed in ${dir}`);
  }
  const results = { before: {}, after: {} };
  const runOne = (dir, group) => {
    const launcherOnly = LAUNCHER_GROUPS.has(group);
    const env = launcherOnly ? { ...process.env, GHOSTWATCH_BENCH_BIN: join(dir, 'bin/ghostwatch.js') } : process.env;
    const r = spawnSync('node', ['dist/bench/run.js', '--json', '--only', group], { cwd: launcherOnly ? root : dir, env, encoding: 'utf8', maxBuffer: 1 << 24 });
    const line = r.stdout.trim().split('\n').pop() ?? '';
    try {
      return JSON.parse(line);
    } catch {
      process.stderr.write(`bench:compare: ${group} in ${dir} gave no figures (exit ${r.status})\n${r.stderr.slice(-2000)}\n`);
      return {};
    }
  };
  const targets = {};
  for (let round = 0; round < rounds; round++) {
    for (const group of groups) {
      // Alternate which build goes first, so neither always meets a warm or a cold machine.
      const order = round % 2 === 0 ? [['before', old], ['after', root]] : [['after', root], ['before', old]];
      for (const [side, dir] of order) {
        process.stderr.write(`bench:compare: ${group} (${side}, round ${round + 1}/${rounds})…\n`);
        for (const [k, f] of Object.entries(runOne(dir, group))) {
          (results[side][k] ??= { unit: f.unit, values: [] }).values.push(f.value);
          if (f.target) targets[k] = f.target;
        }
      }
    }
  }
  const med = (vs) => {
    const s = vs.filter((v) => typeof v === 'number').sort((a, b) => a - b);
    return s.length === 0 ? null : s[Math.floor((s.length - 1) / 2)];
  };
  const higherIsBetter = (k, unit) => /^>=|^>/.test(targets[k] ?? '') || /\/s$/.test(unit ?? '') && !/bytes|MB/.test(unit ?? '');
  const rows = [];
  const keys = [...new Set([...Object.keys(results.after), ...Object.keys(results.before)])];
  let worse = 0;
  for (const k of keys) {
    const unit = results.after[k]?.unit ?? results.before[k]?.unit ?? '';
    const b = med(results.before[k]?.values ?? []);
    const a = med(results.after[k]?.values ?? []);
    let change = '';
    let flag = '';
    if (typeof a === 'number' && typeof b === 'number' && b !== 0) {
      const pct = ((a - b) / Math.abs(b)) * 100;
      change = `${pct >= 0 ? '+' : ''}${pct.toFixed(1)} %`;
      const bad = higherIsBetter(k, unit) ? pct < -10 : pct > 10;
      // Tiny absolute figures (a few ms, bytes) move by more than 10 % on noise alone: say so.
      if (bad) {
        flag = 'WORSE';
        worse++;
      }
    }
    rows.push([k, b === null ? 'n/a' : String(b), a === null ? 'n/a' : String(a), unit, change, flag]);
  }
  const head = ['figure', `before ${sha.slice(0, 7)}`, `after ${here}`, 'unit', 'change', ''];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (i === 1 || i === 2 || i === 4 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd();
  process.stdout.write(`ghostwatch bench, before and after, one run, ${rounds} round(s), Node ${process.version}\n\n`);
  process.stdout.write(`${line(head)}\n`);
  for (const r of rows) process.stdout.write(`${line(r)}\n`);
  process.stdout.write(`\n${worse} figure(s) more than 10 % worse\n`);
} finally {
  cleanup();
}
