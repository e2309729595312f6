// What every command that reads registries shares: the settings, the sources and engine built
// from them, and the one-pass report. No Ink here: check, reap and status load only this.
import { hostname } from 'node:os';
import { createEngine } from '../engine/index.js';
import { defaultLeftoverMemoryPath, leftoverMemoryFile } from '../os/leftover-memory.js';
import type { Engine } from '../engine/types.js';
import { AgentctlSource } from '../sources/agentctl/index.js';
import { claudeSources } from '../sources/claude/index.js';
import { HypivisorSource } from '../sources/hypivisor/index.js';
import { agentctlNotThere, hypivisorNotThere, LookedForSource } from '../sources/looked-for.js';
import { defaultTrashDir } from '../sources/trash.js';
import type { Source, SourceState } from '../sources/types.js';
import type { CheckFormat } from './check.js';
import { prometheusText } from './report-prometheus.js';
import { checkJsonText, formatReport, sourceErrors } from './report.js';
import type { MonitorSettings } from './settings.js';

/** The sources of the settings' registries; those found rather than named (no --source) say "absent" when nothing is there. */
export function buildSources(settings: MonitorSettings): Source[] {
  const host = hostname();
  const sources: Source[] = [];
  const lookedFor = (source: Source, nothingThere: (s: SourceState) => boolean): Source => (settings.discovery ? new LookedForSource(source, nothingThere) : source);
  for (const kind of settings.kinds) {
    if (kind === 'hypivisor' && settings.target) {
      const { target } = settings;
      const source = new HypivisorSource({ url: target.url, token: target.token, ca: target.ca, ...(target.maxPayload ? { maxPayload: target.maxPayload } : {}) });
      sources.push(lookedFor(source, hypivisorNotThere));
    } else if (kind === 'agentctl') {
      sources.push(lookedFor(new AgentctlSource({ socketPath: settings.agentctlSocket, host }), agentctlNotThere));
    } else if (kind === 'claude') {
      sources.push(...claudeSources(settings.claude, host, settings.trashDir ?? defaultTrashDir()));
    }
  }
  return sources;
}

/** `leftovers: false`: no look at what agents start (the tmux status line shows none of it). */
export function buildEngine(settings: MonitorSettings, opts: { leftovers?: boolean } = {}): Engine {
  const sources = buildSources(settings);
  return createEngine({
    sources,
    hostName: hostname(),
    hostAliases: settings.hostAliases,
    ...(settings.pendingTtlMs !== undefined ? { pendingTtlMs: settings.pendingTtlMs } : {}),
    intervalScale: settings.intervalScale,
    readOnly: settings.readOnly,
    probeRemotePorts: settings.probeRemotePorts,
    ...(settings.auditLogPath !== undefined ? { auditLogPath: settings.auditLogPath } : {}),
    ...(settings.sshHosts.length > 0 || settings.sshAll ? { ssh: { hosts: settings.sshHosts, all: settings.sshAll } } : {}),
    ...(opts.leftovers === false ? { trackLeftovers: false } : { leftoverMemory: leftoverMemoryFile(settings.leftoverMemoryPath ?? defaultLeftoverMemoryPath()) }),
    ...(settings.killGraceMs !== undefined ? { killGraceMs: settings.killGraceMs } : {}),
  });
}

/**
 * One pass for `check` and for the live view without a terminal: wait until settled (or the
 * timeout), print the report, the JSON object or the Prometheus text, and return the exit code:
 * 2 when a registry could not be read (one line on stderr) or, with `requireSettled`, when not
 * every pid was probed in time; else 1 for problems, 0 for none.
 */
export async function reportOnce(
  engine: Engine,
  opts: { timeoutMs: number; format: CheckFormat; note?: string; requireSettled?: boolean; discovery?: MonitorSettings['discovery'] },
): Promise<number> {
  const snap = await engine.settled(opts.timeoutMs);
  await engine.stop();
  const absent = opts.discovery?.absent;
  // A terminal's width cuts the reasons; piped (a file, grep, a mail from cron), nothing is cut.
  const width = process.stdout.isTTY ? process.stdout.columns || 120 : Number.POSITIVE_INFINITY;
  // Printed whatever the exit code: on a registry error, what the others gave (and, in the
  // Prometheus text, that one's ghostwatch_source_up 0) is still the report.
  process.stdout.write(opts.format === 'json' ? checkJsonText(snap, absent) : opts.format === 'prometheus' ? prometheusText(snap) : formatReport(snap, width, absent));
  if (opts.note) process.stderr.write(`ghostwatch: ${opts.note}\n`);
  const errors = sourceErrors(snap);
  if (errors) {
    process.stderr.write(`ghostwatch: ${errors}\n`);
    return 2;
  }
  if (opts.requireSettled && !snap.settled) {
    process.stderr.write(`ghostwatch: not every pid was probed within ${opts.timeoutMs / 1000} s; the report may be incomplete\n`);
    return 2;
  }
  return snap.problems > 0 ? 1 : 0;
}
