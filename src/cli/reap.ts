// `ghostwatch reap`: evict every problem, for cron. Each entry is re-verified and audited exactly
// as in the live monitor (same executor). In a terminal it asks once; without one it needs --yes.
// Every line may quote a registry (ids, reasons, its answers): each piece is sanitized here.
import { createInterface } from 'node:readline/promises';
import { VERDICT_TRAITS, VERDICTS } from '../core/verdicts.js';
import { formatOptions, UsageError, type OptionSpec } from './args.js';
import { commandOptions, MONITOR_OPTIONS, monitorSettings, REGISTRIES_HELP } from './settings.js';

/** Verdicts reap can be limited to: the problems, all evictable without force. */
export const REAPABLE: readonly string[] = VERDICTS.filter((v) => VERDICT_TRAITS[v].problem && VERDICT_TRAITS[v].evictable);

export const REAP_OPTIONS: readonly OptionSpec[] = [
  ...MONITOR_OPTIONS.filter((o) => o.name !== 'read-only'),
  { name: 'dry-run', type: 'boolean', description: 'print what would be evicted, change nothing' },
  { name: 'yes', type: 'boolean', description: 'do not ask (required without a terminal)' },
  { name: 'only', type: 'string', repeatable: true, valueName: 'VERDICTS', description: `limit to these verdicts, comma-separated: ${REAPABLE.join(',')}` },
  { name: 'leftovers', type: 'boolean', description: 'also end the processes dead agents left running (SIGTERM, then SIGKILL after --kill-grace), each re-checked and audited' },
  { name: 'timeout', type: 'number', valueName: 'SECONDS', description: 'longest wait for the registry and the first probe (default 10)' },
];

export function reapUsage(): string {
  return [
    'ghostwatch reap — evict every problem entry (re-verified right before, audited), for cron',
    '',
    'Usage: ghostwatch reap [--dry-run] [--yes] [--only VERDICT,...] [--leftovers] [options]',
    '',
    'Options:',
    formatOptions(REAP_OPTIONS),
    '',
    'Exit 0 when everything planned was evicted or was already gone (or the question was declined), 1 otherwise, 2 on errors.',
    'Processes are left alone unless --leftovers is given: then what dead agents left running is ended too',
    '(never pid 1, ghostwatch, a process a live agent also started, or another user\'s unless run as root).',
    '',
    ...REGISTRIES_HELP,
    '',
    'Examples:',
    '  ghostwatch reap --dry-run',
    '  ghostwatch reap --only ghost,zombie',
    '  ghostwatch reap --leftovers --dry-run       # also what dead agents left running',
    '  */5 * * * * ghostwatch reap --yes --only ghost >> ~/.local/state/ghostwatch/reap.log 2>&1',
  ].join('\n');
}

function parseOnly(values: readonly string[] | undefined): Set<string> | undefined {
  if (!values) return undefined;
  const verdicts = values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  for (const v of verdicts) {
    if (!REAPABLE.includes(v)) {
      throw new UsageError(`--only: "${v}" is not a verdict reap evicts (${REAPABLE.join(', ')})`);
    }
  }
  return new Set(verdicts);
}

export async function reapCommand(argv: readonly string[]): Promise<number> {
  const options = commandOptions(argv, REAP_OPTIONS, reapUsage);
  if (!options) return 0;
  const only = parseOnly(options.list('only'));
  const dryRun = options.flag('dry-run');
  const interactive = process.stdin.isTTY === true && process.stdout.isTTY === true;
  if (!dryRun && !options.flag('yes') && !interactive) {
    throw new UsageError('reap needs --yes when there is no terminal to ask in (or --dry-run to see the plan)');
  }
  const timeout = options.number('timeout') ?? 10;
  const settings = { ...monitorSettings(options), readOnly: false };
  const withLeftovers = options.flag('leftovers');
  const [{ buildEngine }, { sourceErrors }, { sanitize }, { evictionNotes }, { leftoverTargets }, { leftoverLine }] = await Promise.all([
    import('./engine-setup.js'),
    import('./report.js'),
    import('../core/sanitize.js'),
    import('../engine/eviction-notes.js'),
    import('../engine/leftover-rows.js'),
    import('../ui/leftover-text.js'),
  ]);
  const engine = buildEngine(settings);
  engine.start();
  try {
    const snap = await engine.settled(timeout * 1000);
    for (const line of snap.os.notices ?? []) process.stderr.write(`ghostwatch: ${line}\n`);
    const errors = sourceErrors(snap);
    if (errors) {
      process.stderr.write(`ghostwatch: ${sanitize(errors, 2000)}\n`);
      return 2;
    }
    const problems = snap.findings.filter((f) => f.problem && f.evictable && (!only || only.has(f.verdict)));
    const notes = evictionNotes(problems, snap.sources);
    // Rows of a registry that cannot evict now are named, not attempted: a cron job must not fail on them every run.
    const plan = problems.filter((f) => !notes.unavailable.has(f.source));
    // With none named, only the registries found count: one found needs no SOURCE column.
    const several = (settings.discovery ? snap.sources.filter((s) => s.status !== 'absent') : snap.sources).length > 1;
    const line = (verdict: string, f: (typeof plan)[number], extra = '') =>
      `${verdict.padEnd(12)} ${f.kind.padEnd(7)} ${several ? `${sanitize(f.source, 28)} ` : ''}${sanitize(f.id, 60)}${f.entry.pid !== undefined ? ` pid ${sanitize(f.entry.pid, 12)}` : ''}${extra}`;
    for (const [name, why] of notes.unavailable) {
      const n = problems.filter((f) => f.source === name).length;
      process.stderr.write(`ghostwatch: ${n} problem${n === 1 ? '' : 's'} of ${sanitize(name, 20)} left alone: ${sanitize(why, 300)}\n`);
    }
    // What dead agents left running: ended only with --leftovers; otherwise named once.
    const left = leftoverTargets([...snap.findings, ...(snap.departed ?? [])].filter((f) => !only || only.has(f.verdict)));
    if (!withLeftovers && left.length > 0) {
      process.stderr.write(`ghostwatch: ${left.length} process${left.length === 1 ? '' : 'es'} dead agents left running, left alone (reap --leftovers ends them)\n`);
    }
    const ending = withLeftovers ? left : [];
    if (plan.length === 0 && ending.length === 0) {
      process.stdout.write('nothing to reap\n');
      return 0;
    }
    for (const f of plan) process.stdout.write(`${line(f.verdict, f, `: ${sanitize(f.reason, 500)}`)}\n`);
    const leftLine = (word: string, t: (typeof ending)[number], extra = '') =>
      `${word.padEnd(12)} process ${several ? `${sanitize(t.agent.source, 28)} ` : ''}${leftoverLine(t.leftover, snap.computedAt, 120)} (left by ${sanitize(t.agent.id, 60)} pid ${t.agent.pid})${extra}`;
    for (const t of ending) process.stdout.write(`${leftLine('leftover', t)}\n`);
    if (ending.some((t) => t.leftover.otherUser)) process.stdout.write('note: ghostwatch runs as root: processes of other users are among them and will be signalled\n');
    for (const note of notes.notes) process.stdout.write(`note: ${sanitize(note, 500)}\n`);
    const ends = `end ${ending.length} leftover process${ending.length === 1 ? '' : 'es'}`;
    const what = [plan.length > 0 ? `evict ${plan.length}` : '', ending.length > 0 ? ends : ''].filter(Boolean).join(' and ');
    if (dryRun) {
      process.stdout.write(`dry run: would ${what}; nothing was changed\n`);
      return 0;
    }
    if (!options.flag('yes')) {
      const rl = createInterface({ input: process.stdin, output: process.stdout });
      const question = plan.length === 0 ? `End these ${ending.length} leftover process${ending.length === 1 ? '' : 'es'}?` : `Evict these ${plan.length}${ending.length > 0 ? ` and ${ends}` : ''}?`;
      const answer = await rl.question(`${question} Each is re-checked first. [y/N] `);
      rl.close();
      if (!/^y(es)?$/i.test(answer.trim())) {
        // Declining is an answer, not a failure: nothing was meant to change and nothing did.
        process.stdout.write('nothing evicted (declined)\n');
        return 0;
      }
    }
    const summary = await engine.evict({ selection: plan, force: false });
    for (const r of summary.results) process.stdout.write(`${line(r.outcome, r.finding, r.detail ? `: ${sanitize(r.detail, 500)}` : '')}\n`);
    let leftoversOk = true;
    if (ending.length > 0) {
      const ended = engine.endLeftovers ? await engine.endLeftovers({ selection: ending }) : undefined;
      for (const r of ended?.results ?? []) process.stdout.write(`${leftLine(r.outcome, r.target, r.detail ? `: ${sanitize(r.detail, 300)}` : '')}\n`);
      const c = ended?.counts;
      leftoversOk = c !== undefined && c.skipped + c.refused + c.failed === 0;
      if (c) process.stdout.write(`leftovers: ended ${c.ended + c.killed} (${c.killed} after SIGKILL), already gone ${c['already-gone']}, skipped ${c.skipped}, refused ${c.refused}, failed ${c.failed}\n`);
    }
    if (plan.length === 0) return leftoversOk ? 0 : 1;
    // What a request removed besides (agentctl's prune takes every dead record): named, never silent.
    for (const a of summary.alsoRemoved ?? []) {
      if (a.selected) continue;
      const pid = a.pid !== undefined ? ` pid ${sanitize(a.pid, 12)}` : '';
      process.stdout.write(
        `${'also-removed'.padEnd(12)} ${a.kind.padEnd(7)} ${several ? `${sanitize(a.source, 28)} ` : ''}${sanitize(a.id, 60)}${pid}: ${sanitize(a.change, 40)} after the request for ${sanitize(a.by.id, 60)}\n`,
      );
    }
    const c = summary.counts;
    process.stdout.write(
      `evicted ${c.evicted}, already gone ${c['already-gone']}, skipped ${c.skipped}, refused ${c.refused}, failed ${c.failed}${alsoText(summary.alsoRemoved)}\n`,
    );
    return c.skipped + c.refused + c.failed === 0 && leftoversOk ? 0 : 1;
  } finally {
    await engine.stop();
  }
}

/** ", also removed N not selected" when a request took unselected records with it. */
function alsoText(also: readonly { readonly selected: boolean }[] | undefined): string {
  const n = also?.filter((a) => !a.selected).length ?? 0;
  return n > 0 ? `, also removed ${n} not selected` : '';
}
