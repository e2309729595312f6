// `npm run bench`: every figure the issues name, as a table, or as one JSON object with --json.
import { hostname, cpus } from 'node:os';
import { coreFigures } from './core-figures.js';
import type { Figures } from './figures.js';
import { osFigures } from './os-figures.js';
import { sourcesFigures } from './sources-figures.js';
import { cliFigures } from './cli-figures.js';
import { uiFigures } from './ui-figures.js';

const groups: [string, () => Promise<Figures>][] = [
  ['core', coreFigures],
  ['os', osFigures],
  ['sources', sourcesFigures],
  ['cli', cliFigures],
  ['ui', uiFigures],
];

const json = process.argv.includes('--json');
const all: Figures = {};
for (const [name, run] of groups) {
  if (!json) process.stderr.write(`bench: ${name}…\n`);
  Object.assign(all, await run());
}

if (json) {
  const out: Record<string, { value: number; unit: string }> = {};
  for (const [k, f] of Object.entries(all)) out[k] = { value: f.value, unit: f.unit };
  process.stdout.write(`${JSON.stringify(out)}\n`);
} else {
  const cpu = cpus()[0]?.model ?? 'unknown cpu';
  process.stdout.write(`ghostwatch bench on ${hostname()} (${cpus().length} × ${cpu}), Node ${process.version}\n\n`);
  const rows = Object.entries(all).map(([k, f]) => [k, String(f.value), f.unit, f.target ?? '']);
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length), ['figure', 'value', 'unit', 'target'][i]!.length));
  const line = (r: string[]) => r.map((c, i) => (i === 1 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  process.stdout.write(`${line(['figure', 'value', 'unit', 'target'])}\n`);
  for (const r of rows) process.stdout.write(`${line(r)}\n`);
}
