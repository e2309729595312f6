// `ghostwatch status --format tmux|tmux-color|plain|json`: one short line for a status bar, fast. The
// engine's pipeline in one pass, without its loop: the same settings, the registry's snapshot,
// the probe targets chosen by the one rule (core/probe-targets.ts), the same probes, reconcile.
// No ws package, no process-table scanner, no Ink. Other registries go through the engine itself.
// If the registry does not answer within --timeout it prints "?" (tmux: "gw ?"). tmux-color is
// the tmux line with each count in its verdict's colour (the theme's), in tmux's #[fg=…] styles.
import { hostname } from 'node:os';
import * as core from '../core/index.js';
import { tmuxStyled } from '../core/tmux.js';
import { PROBLEM_VERDICTS, problemCounts, VERDICT_TRAITS } from '../core/verdicts.js';
import { probePids } from '../os/liveness.js';
import { probePortFacts } from '../os/port-facts.js';
import { readInitSnapshot } from '../sources/hypivisor/init-reader.js';
import * as wire from '../sources/hypivisor/wire.js';
import { TONE_COLOR } from '../ui/theme.js';
import { formatOptions, UsageError, type OptionSpec } from './args.js';
import { commandOptions, MONITOR_OPTIONS, monitorSettings, REGISTRIES_HELP, type LookedFor, type MonitorSettings } from './settings.js';

const FORMATS = ['tmux', 'tmux-color', 'plain', 'json'] as const;
type Format = (typeof FORMATS)[number];

function formatOf(name: string | undefined): Format {
  const format = FORMATS.find((f) => f === (name ?? 'tmux'));
  if (format === undefined) throw new UsageError(`--format must be one of ${FORMATS.join(', ')}`);
  return format;
}

export const STATUS_OPTIONS: readonly OptionSpec[] = [
  ...MONITOR_OPTIONS.filter((o) => !['read-only', 'interval', 'no-color'].includes(o.name)),
  { name: 'format', type: 'string', valueName: 'FORMAT', description: 'tmux (default), tmux-color, plain or json' },
  { name: 'timeout', type: 'number', valueName: 'SECONDS', description: 'give up and print "?" after this (default 1)' },
];

export function statusUsage(): string {
  return [
    'ghostwatch status — one short line for a status bar, e.g. "gw 2 ghost 1 stale"',
    '',
    'Usage: ghostwatch status [--format tmux|tmux-color|plain|json] [options]',
    '',
    'Options:',
    formatOptions(STATUS_OPTIONS),
    '',
    ...REGISTRIES_HELP,
    'No registry found at all: "gw -" (plain: what was looked for where), exit 0.',
    '',
    'In ~/.tmux.conf:',
    "  set -g status-right '#(ghostwatch status --format tmux-color) %H:%M'",
    "  set -g status-right-length 100   # tmux's default (40) cuts a line with several verdicts",
    '  set -g status-interval 10',
  ].join('\n');
}

export async function statusCommand(argv: readonly string[]): Promise<number> {
  const options = commandOptions(argv, STATUS_OPTIONS, statusUsage);
  if (!options) return 0;
  const format = formatOf(options.string('format'));
  const timeoutMs = (options.number('timeout') ?? 1) * 1000;
  const settings = monitorSettings(options);
  const { target } = settings;
  if (settings.kinds.length !== 1 || settings.kinds[0] !== 'hypivisor' || !target) return statusViaEngine(settings, format, timeoutMs);

  // Only what one pass needs (imported above, in this command's own chunk): no ws package, no
  // process-table scanner (ps-list), no engine.
  let init: Awaited<ReturnType<typeof readInitSnapshot>>;
  try {
    init = await readInitSnapshot({ url: target.url, token: target.token, ca: target.ca, timeoutMs, maxPayload: target.maxPayload });
  } catch (error) {
    // Not named, and nothing listens there: no registry on this host, which is not an error.
    const code = error instanceof Error && 'code' in error ? String(error.code) : '';
    if (settings.discovery && NOTHING_LISTENS.has(code)) return printNothingFound(format, [{ name: 'hypivisor', where: core.redactUrl(target.url) }, ...settings.discovery.absent]);
    const why = core.sanitize(error instanceof Error ? error.message : String(error), 200);
    process.stdout.write(format === 'json' ? `${JSON.stringify({ connected: false, error: why })}\n` : format === 'tmux' ? 'gw ?\n' : format === 'tmux-color' ? `${tmuxUnknown()}\n` : `? ${why}\n`);
    return 2;
  }
  const now = Date.now();
  const seen = { firstObservedAt: now, joinSeq: 0 };
  const view = {
    sessions: init.nodes.map((n) => wire.toSessionEntry(n, 'hypivisor', seen, now)).filter((e) => e !== undefined),
    claims: (init.claims ?? []).map((c) => wire.toClaimEntry(c, 'hypivisor', now)).filter((c) => c !== undefined),
  };

  const policy = core.defaultPolicy(hostname(), { hostAliases: settings.hostAliases, pendingTtlMs: settings.pendingTtlMs });
  const targets = core.chooseProbeTargets(view, core.localMachineTest(policy.hostName, policy.hostAliases));
  // The same port facts as the engine's (the socket table too), and the processes serving the
  // ports probed like registered pids: status must not call a ghost what check calls live.
  const [pidFacts, portFacts] = await Promise.all([probePids([...targets.pids], { full: true }), probePortFacts([...targets.ports], { timeoutMs: 150 })]);
  const owners = [...portFacts.values()].flatMap((f) => f.owners ?? []).filter((pid) => !pidFacts.has(pid));
  if (owners.length > 0) for (const [pid, facts] of await probePids(owners, { full: true })) pidFacts.set(pid, facts);
  const findings = core.reconcile(view, { pids: pidFacts, ports: portFacts }, Date.now(), policy);

  const counts = Object.fromEntries(core.VERDICTS.map((v) => [v, findings.filter((f) => f.verdict === v).length]));
  return printStatus(format, counts, findings.filter((f) => f.problem).length);
}

/**
 * Other registries (agentctl, session files) or several at once: the monitor's engine, once,
 * until settled or the timeout. Slower to start than the hypivisor-only path, still one line.
 */
async function statusViaEngine(settings: MonitorSettings, format: Format, timeoutMs: number): Promise<number> {
  const [{ buildEngine }, { sourceErrors }] = await Promise.all([import('./engine-setup.js'), import('./report.js')]);
  const engine = buildEngine({ ...settings, readOnly: true }, { leftovers: false });
  engine.start();
  const snap = await engine.settled(timeoutMs);
  await engine.stop();
  const error = sourceErrors(snap);
  if (settings.discovery && !error && snap.sources.every((s) => s.status === 'absent')) {
    const absent = [...snap.sources.map((s) => ({ name: s.name, where: s.url })), ...settings.discovery.absent];
    return printNothingFound(format, absent);
  }
  if (error && snap.findings.length === 0) {
    process.stdout.write(format === 'json' ? `${JSON.stringify({ connected: false, error })}\n` : format === 'tmux' ? 'gw ?\n' : format === 'tmux-color' ? `${tmuxUnknown()}\n` : `? ${error}\n`);
    return 2;
  }
  return printStatus(format, { ...snap.counts }, snap.problems);
}

async function printStatus(format: Format, counts: Readonly<Record<string, number>>, problems: number): Promise<number> {
  if (format === 'json') process.stdout.write(`${JSON.stringify({ connected: true, problems, summary: counts })}\n`);
  else if (format === 'tmux') {
    // The problems by their short names (core's VERDICT_TRAITS).
    const parts = problemCounts(counts);
    process.stdout.write(`gw ${parts.length > 0 ? parts.join(' ') : 'ok'}\n`);
  } else if (format === 'tmux-color') {
    process.stdout.write(`${tmuxColorLine(counts)}\n`);
  } else {
    // Loaded on use: report.js measures text with string-width, whose set-up a tmux line need not pay.
    const { summaryLine } = await import('./report.js');
    process.stdout.write(`${summaryLine(counts, problems)}\n`);
  }
  return problems > 0 ? 1 : 0;
}

/** Connection errors that mean nothing is at a registry's address (the host's own, or no such host). */
const NOTHING_LISTENS = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EHOSTUNREACH', 'ENETUNREACH']);

/** No registry named and none found: "gw -", said, exit 0 (an absent registry is not an error). */
async function printNothingFound(format: Format, absent: readonly LookedFor[]): Promise<number> {
  const { sanitize } = await import('../core/sanitize.js');
  const lookedFor = absent.map((a) => ({ name: sanitize(a.name, 40), where: sanitize(a.where, 200) }));
  if (format === 'json') process.stdout.write(`${JSON.stringify({ connected: false, problems: 0, lookedFor: { found: [], absent: lookedFor } })}\n`);
  else if (format === 'tmux') process.stdout.write('gw -\n');
  else if (format === 'tmux-color') {
    const [{ tmuxStyled }, { TONE_COLOR }] = await Promise.all([import('../core/tmux.js'), import('../ui/theme.js')]);
    process.stdout.write(`gw ${tmuxStyled([['-', TONE_COLOR.muted]])}\n`);
  } else process.stdout.write(`no registry on this host; looked for ${lookedFor.map((a) => `${a.name} (${a.where})`).join(', ')}\n`);
  return 0;
}

/** The tmux line in colour: `gw #[fg=red]2 ghost#[default] …`, each count in its verdict's tone (the UI theme's colours). */
function tmuxColorLine(counts: Readonly<Record<string, number>>): string {
  const parts = PROBLEM_VERDICTS.filter((v) => (counts[v] ?? 0) > 0).map((v) => [`${counts[v]} ${VERDICT_TRAITS[v].short}`, TONE_COLOR[VERDICT_TRAITS[v].tone]] as const);
  return `gw ${tmuxStyled(parts.length > 0 ? parts : [['ok', TONE_COLOR.ok]])}`;
}

/** The registry did not answer: a `?` in the warning colour. */
function tmuxUnknown(): string {
  return `gw ${tmuxStyled([['?', TONE_COLOR.warning]])}`;
}
