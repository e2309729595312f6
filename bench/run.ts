// `npm run bench`: every figure the issues name, as a table, or as one JSON object with --json.
// First: React's production build, as the CLI runs it (before anything loads React).
import './production-env.js';
import { hostname, cpus } from 'node:os';
import { coreFigures } from './core-figures.js';
import type { Figures } from './figures.js';
import { osFigures } from './os-figures.js';
import { sourcesFigures } from './sources-figures.js';
import { serveFigures } from './serve-figures.js';
import { cliFigures } from './cli-figures.js';
import { uiFigures } from './ui-figures.js';
import { detectFigures } from './detect-figures.js';
import { idleFigures } from './idle-figures.js';
import { verdictFigures } from './verdict-figures.js';
import { fleetFigures } from './fleet-figures.js';
import { sshFloodFigures } from './ssh-flood-figures.js';
import { leftoverFigures } from './leftover-figures.js';
import { costsFigures } from './costs-figures.js';

const groups: [string, () => Promise<Figures>][] = [
  ['core', coreFigures],
  ['os', osFigures],
  ['sources', sourcesFigures],
  ['serve', serveFigures],
  ['cli', cliFigures],
  ['ui', uiFigures],
  ['detect', detectFigures],
  ['idle', idleFigures],
  ['verdict', verdictFigures],
  ['fleet', fleetFigures],
  ['ssh-flood', sshFloodFigures],
  ['leftovers', leftoverFigures],
  ['costs', costsFigures],
];

const json = process.argv.includes('--json');
// `--only detect,idle`: just those groups (the others take a minute and more).
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt >= 0 ? new Set((process.argv[onlyAt + 1] ?? '').split(',')) : undefined;
const unknown = only ? [...only].filter((name) => !groups.some(([g]) => g === name)) : [];
if (unknown.length > 0) {
  process.stderr.write(`bench: no group ${unknown.join(', ')} (groups: ${groups.map(([g]) => g).join(', ')})\n`);
  process.exit(2);
}
const all: Figures = {};
for (const [name, run] of groups) {
  if (only && !only.has(name)) continue;
  if (!json) process.stderr.write(`bench: ${name}…\n`);
  Object.assign(all, await run());
}

if (json) {
  const out: Record<string, { value: number | null; unit: string }> = {};
  for (const [k, f] of Object.entries(all)) out[k] = { value: f.value, unit: f.unit };
  process.stdout.write(`${JSON.stringify(out)}\n`);
} else {
  const cpu = cpus()[0]?.model ?? 'unknown cpu';
  process.stdout.write(`ghostwatch bench on ${hostname()} (${cpus().length} × ${cpu}), Node ${process.version}\n\n`);
  const rows = Object.entries(all).map(([k, f]) => [k, f.value === null ? 'n/a' : String(f.value), f.unit, f.target ?? '']);
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length), ['figure', 'value', 'unit', 'target'][i]!.length));
  const line = (r: string[]) => r.map((c, i) => (i === 1 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  process.stdout.write(`${line(['figure', 'value', 'unit', 'target'])}\n`);
  for (const r of rows) process.stdout.write(`${line(r)}\n`);
}
