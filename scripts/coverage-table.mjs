// After `npm test -- --coverage` (.ci/run): the files under 90 % of lines or 80 % of branches, from
// coverage/coverage-summary.json, weakest first, and the total. The floors themselves are enforced
// by vitest (coverage.thresholds in vitest.config.ts); this only shows where the suite is thin.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const summary = JSON.parse(readFileSync('coverage/coverage-summary.json', 'utf8'));
const pct = (m) => `${m.pct.toFixed(1).padStart(5)} %`;
const rows = Object.entries(summary)
  .filter(([file, s]) => file !== 'total' && (s.lines.pct < 90 || s.branches.pct < 80))
  .sort(([, a], [, b]) => a.branches.pct - b.branches.pct);
process.stdout.write(`${'file'.padEnd(44)} lines    branches\n`);
for (const [file, s] of rows) process.stdout.write(`${relative(process.cwd(), file).padEnd(44)} ${pct(s.lines)}  ${pct(s.branches)}\n`);
process.stdout.write(`${'all files'.padEnd(44)} ${pct(summary.total.lines)}  ${pct(summary.total.branches)}\n`);
