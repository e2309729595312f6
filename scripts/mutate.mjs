// `npm run mutate [-- --scope core|engine] [-- <stryker options>]`: runs Stryker
// (stryker.config.mjs) once per folder, src/core then src/engine, then prints every surviving
// mutant, grouped by file, and the mutation score of each folder against its floor; exits non-zero
// when a folder is under it. `--report-only` prints the last runs' figures again without mutating.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const FLOORS = { 'src/core': 85, 'src/engine': 75 };
const SCOPES = ['core', 'engine'];

const args = process.argv.slice(2);
const reportOnly = args.includes('--report-only');
let scopes = SCOPES;
const strykerArgs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--report-only') continue;
  if (args[i] === '--scope') {
    scopes = String(args[++i] ?? '').split(',').filter((s) => SCOPES.includes(s));
    if (scopes.length === 0) {
      process.stderr.write(`mutate: --scope takes ${SCOPES.join(', ')}\n`);
      process.exit(2);
    }
  } else strykerArgs.push(args[i]);
}

if (!reportOnly) {
  // A few engine tests run the built CLI: build first so they never run a stale dist/.
  const build = spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
  for (const scope of scopes) {
    process.stdout.write(`\n== mutating src/${scope}\n`);
    const env = { ...process.env, GHOSTWATCH_MUTATE_SCOPE: scope };
    const run = spawnSync('npx', ['stryker', 'run', ...strykerArgs], { stdio: 'inherit', env });
    if (run.status !== 0) process.exit(run.status ?? 1);
  }
}

const files = {};
for (const scope of scopes) {
  const path = `reports/mutation/${scope}.json`;
  if (!existsSync(path)) {
    process.stderr.write(`mutate: no report at ${path} (run npm run mutate -- --scope ${scope})\n`);
    continue;
  }
  Object.assign(files, JSON.parse(readFileSync(path, 'utf8')).files);
}
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

const folders = new Map();
const survivors = new Map();
for (const [file, { mutants, source }] of Object.entries(files)) {
  const folder = Object.keys(FLOORS).find((f) => file.startsWith(`${f}/`)) ?? file.split('/').slice(0, 2).join('/');
  const tally = folders.get(folder) ?? { detected: 0, undetected: 0 };
  const lines = source.split('\n');
  for (const m of mutants) {
    if (DETECTED.has(m.status)) tally.detected++;
    else if (UNDETECTED.has(m.status)) {
      tally.undetected++;
      const list = survivors.get(file) ?? [];
      const line = m.location.start.line;
      const original = (lines[line - 1] ?? '').trim();
      list.push({ line, status: m.status, mutator: m.mutatorName, replacement: m.replacement, original });
      survivors.set(file, list);
    }
  }
  folders.set(folder, tally);
}

const oneLine = (s, max = 90) => {
  const flat = String(s ?? '').replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

if (survivors.size > 0) {
  process.stdout.write('\nsurviving mutants (Survived, or NoCoverage: no test runs the line)\n');
  for (const [file, list] of [...survivors].sort(([a], [b]) => a.localeCompare(b))) {
    process.stdout.write(`\n${file} (${list.length})\n`);
    for (const s of list.sort((a, b) => a.line - b.line)) {
      process.stdout.write(`  ${String(s.line).padStart(4)}  ${s.mutator}${s.status === 'NoCoverage' ? ' [no coverage]' : ''}: ${oneLine(s.original, 60)}  ->  ${oneLine(s.replacement, 60)}\n`);
    }
  }
}

process.stdout.write('\nmutation score per folder (killed + timed out) / (all but compile errors)\n');
let below = false;
for (const [folder, { detected, undetected }] of [...folders].sort(([a], [b]) => a.localeCompare(b))) {
  const total = detected + undetected;
  const score = total === 0 ? 100 : (100 * detected) / total;
  const floor = FLOORS[folder];
  const verdict = floor === undefined ? '' : score >= floor ? `  ok (floor ${floor} %)` : `  UNDER the floor of ${floor} %`;
  if (floor !== undefined && score < floor) below = true;
  process.stdout.write(`${folder.padEnd(12)} ${score.toFixed(2).padStart(6)} %  ${detected}/${total} detected${verdict}\n`);
}
process.exit(below ? 1 : 0);
