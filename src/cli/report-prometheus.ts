// `check --format prometheus`: the check as the Prometheus text exposition format (version 0.0.4),
// the one node_exporter's textfile collector reads. Pure: a snapshot in, the text out.
//
// Every label value is a string from outside (a registry's machine name, a source's name), so it
// is sanitized first (no escape sequence reaches a terminal that `cat`s the file, capped in
// length) and then escaped as the format asks (backslash, double quote, newline). Counts are
// summed by the label values as written, so two names that sanitize alike are one series, never
// a duplicate that would make node_exporter drop the whole file. No sample carries a timestamp:
// the textfile collector refuses files that do.
import { sanitize } from '../core/sanitize.js';
import { VERDICT_TRAITS, VERDICTS, type Finding, type Verdict } from '../core/types.js';
import { leftoversOf, type EngineSnapshot } from '../engine/types.js';
import { STATUS_TRAITS } from '../sources/types.js';

/** The longest label value written, in code points: a host or source name, never a whole record. */
export const LABEL_VALUE_MAX = 128;

/** A label value as the text format spells it between its double quotes. */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (ch) => (ch === '\n' ? '\\n' : `\\${ch}`));
}

/**
 * A string from outside as a label value: made inert (sanitize), capped, then escaped. The cut is
 * marked "..." whatever the locale: a series keeps its name between cron (no LANG) and a shell.
 */
export function labelValue(value: unknown): string {
  const text = sanitize(value, Number.MAX_SAFE_INTEGER);
  if (text.length <= LABEL_VALUE_MAX) return escapeLabelValue(text);
  const points = Array.from(text);
  return escapeLabelValue(points.length <= LABEL_VALUE_MAX ? text : `${points.slice(0, LABEL_VALUE_MAX - 3).join('')}...`);
}

/** HELP text as the format spells it: backslash and newline escaped. */
function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (ch) => (ch === '\n' ? '\\n' : '\\\\'));
}

/**
 * The host an entry runs on, as a label: this host's own name when the entry is this host's
 * (whatever spelling the registry used: short name, FQDN, alias), the ssh host's name when it is
 * verified over ssh, else the machine the registry names ("" when it names none).
 */
export function hostOf(f: Finding, thisHost: string): string {
  const host = f.evidence.host;
  if (host.local) return thisHost;
  if (host.ssh) return host.ssh.host;
  return host.machine ?? f.entry.machine ?? '';
}

interface Family {
  readonly name: string;
  readonly help: string;
  /** Each series: its label pairs (values already written as labelValue) and its value. */
  readonly samples: readonly { readonly labels: readonly (readonly [string, string])[]; readonly value: number }[];
}

const KINDS = ['session', 'claim'] as const;
const VERDICTS_OF = {
  session: VERDICTS.filter((v) => VERDICT_TRAITS[v].kind === 'session'),
  claim: VERDICTS.filter((v) => VERDICT_TRAITS[v].kind === 'claim'),
} as const;

/**
 * The counts per verdict, source and host of one kind. A zero is written only where it is known:
 * for a source reading its registry now, every verdict of the kind for this host, each ssh host
 * and each host one of its entries names (so `verdict="ghost"` reads 0, not nothing, once the
 * last ghost is gone); claims only for a source that offers them. A source that is not reading
 * gives only the rows it still holds (the last known, as in `check --json`'s summary).
 */
function countsOf(snap: EngineSnapshot, kind: (typeof KINDS)[number]): Family['samples'] {
  const thisHost = labelValue(snap.host);
  const sshHosts = (snap.hosts ?? []).map((h) => labelValue(h.machine));
  const counts = new Map<string, Map<string, Map<Verdict, number>>>();
  const cell = (source: string, host: string): Map<Verdict, number> => {
    let hosts = counts.get(source);
    if (!hosts) counts.set(source, (hosts = new Map()));
    let verdicts = hosts.get(host);
    if (!verdicts) hosts.set(host, (verdicts = new Map()));
    return verdicts;
  };
  const zeros = (verdicts: Map<Verdict, number>): void => {
    for (const v of VERDICTS_OF[kind]) verdicts.set(v, verdicts.get(v) ?? 0);
  };
  const reading = new Set(snap.sources.filter((s) => STATUS_TRAITS[s.status].reading).map((s) => s.name));
  for (const s of snap.sources) {
    if (!reading.has(s.name) || (kind === 'claim' && s.claims !== true)) continue;
    for (const host of [thisHost, ...sshHosts]) zeros(cell(labelValue(s.name), host));
  }
  for (const f of snap.findings) {
    if (f.kind !== kind) continue;
    const verdicts = cell(labelValue(f.source), labelValue(hostOf(f, snap.host)));
    if (reading.has(f.source)) zeros(verdicts);
    verdicts.set(f.verdict, (verdicts.get(f.verdict) ?? 0) + 1);
  }
  const samples: { labels: [string, string][]; value: number }[] = [];
  for (const [source, hosts] of counts) {
    for (const host of [...hosts.keys()].sort()) {
      const verdicts = hosts.get(host)!;
      for (const v of VERDICTS_OF[kind]) {
        const value = verdicts.get(v);
        if (value !== undefined) samples.push({ labels: [['verdict', v], ['source', source], ['host', host]], value });
      }
    }
  }
  return samples;
}

/**
 * Processes dead agents left running, per source and host (always this host: they are read here
 * only). A zero is written where it is known, as for sessions: every source reading its registry
 * now, on this host, when this host's processes are looked at (Linux); never for an ssh host.
 */
function leftoverCounts(snap: EngineSnapshot): Family['samples'] {
  const host = labelValue(snap.host);
  const counts = new Map<string, number>();
  if (snap.os.leftoversTracked === true) {
    for (const s of snap.sources) if (STATUS_TRAITS[s.status].reading) counts.set(labelValue(s.name), 0);
  }
  for (const f of [...snap.findings, ...(snap.departed ?? [])]) {
    const n = leftoversOf(f)?.length ?? 0;
    if (n === 0) continue;
    const source = labelValue(f.source);
    counts.set(source, (counts.get(source) ?? 0) + n);
  }
  return [...counts].map(([source, value]) => ({ labels: [['source', source], ['host', host]], value }));
}

/** 1 per source reading its registry, 0 per source `check` counts as an error; absent ones have none. */
function sourcesUp(snap: EngineSnapshot): Family['samples'] {
  const up = new Map<string, number>();
  for (const s of snap.sources) {
    if (s.status === 'absent') continue;
    const name = labelValue(s.name);
    const value = STATUS_TRAITS[s.status].error ? 0 : 1;
    // Two sources of one (sanitized) name: one series, down if either is.
    up.set(name, Math.min(up.get(name) ?? 1, value));
  }
  return [...up].map(([source, value]) => ({ labels: [['source', source]], value }));
}

function sshHostsUp(snap: EngineSnapshot): Family['samples'] {
  const up = new Map<string, number>();
  for (const h of snap.hosts ?? []) {
    const name = labelValue(h.machine);
    up.set(name, Math.min(up.get(name) ?? 1, h.state === 'up' ? 1 : 0));
  }
  return [...up].map(([host, value]) => ({ labels: [['host', host]], value }));
}

function familyText(f: Family): string {
  if (f.samples.length === 0) return '';
  const lines = [`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} gauge`];
  for (const s of f.samples) {
    const labels = s.labels.length > 0 ? `{${s.labels.map(([k, v]) => `${k}="${v}"`).join(',')}}` : '';
    lines.push(`${f.name}${labels} ${s.value}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The whole file: every family ghostwatch writes, each with HELP and TYPE, all gauges. */
export function prometheusText(snap: EngineSnapshot): string {
  const families: Family[] = [
    {
      name: 'ghostwatch_sessions',
      help: 'Session entries by verdict, registry (source) and the host they run on, at the last check.',
      samples: countsOf(snap, 'session'),
    },
    {
      name: 'ghostwatch_claims',
      help: 'Claims and locks by verdict, registry (source) and host, at the last check.',
      samples: countsOf(snap, 'claim'),
    },
    {
      name: 'ghostwatch_leftovers',
      help: 'Processes a dead agent started that still run (its leftovers), by the registry (source) of the agent and the host, at the last check.',
      samples: leftoverCounts(snap),
    },
    {
      name: 'ghostwatch_problems',
      help: 'Findings whose verdict is a problem (what check exits 1 for), all sources and hosts.',
      samples: [{ labels: [], value: snap.problems }],
    },
    {
      name: 'ghostwatch_source_up',
      help: 'Whether the registry could be read: 1 read, 0 unreachable, refused or not answering (check exits 2).',
      samples: sourcesUp(snap),
    },
    {
      name: 'ghostwatch_ssh_host_up',
      help: 'Whether the ssh host that verifies remote entries is up: 1 up, 0 connecting or down.',
      samples: sshHostsUp(snap),
    },
    {
      name: 'ghostwatch_check_settled',
      help: 'Whether every registry gave its first read and every local pid was probed before the timeout: 1 yes, 0 no.',
      samples: [{ labels: [], value: snap.settled ? 1 : 0 }],
    },
    {
      name: 'ghostwatch_check_timestamp_seconds',
      help: 'When the check ran, in seconds since the Unix epoch.',
      samples: [{ labels: [], value: snap.computedAt / 1000 }],
    },
  ];
  return families.map(familyText).join('');
}
