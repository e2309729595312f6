// `check --format prometheus` as a pure function: the text exposition format node_exporter's
// textfile collector reads, over fixed snapshots, with label values from hostile registries.
// The real promtool and node_exporter read the built CLI's output in test/cli/prometheus.test.ts.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkFormat } from '../../src/cli/check.js';
import { escapeLabelValue, LABEL_VALUE_MAX, labelValue, prometheusText } from '../../src/cli/report-prometheus.js';
import { defaultPolicy, reconcile, useAsciiEllipsis, VERDICT_TRAITS, VERDICTS, type Finding, type SessionEntry } from '../../src/core/index.js';
import type { EngineSnapshot } from '../../src/engine/types.js';
import { hostileString, unsafeOutput } from '../support/hostile.js';
import { demoFindings, FIXED_NOW, fleetEngine, HOST, leftoverSnapshot, snapshotOf, source } from '../support/ui-fixtures.js';

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

// The format's grammar, strictly: a metric name, label pairs whose values hold only the three
// escapes the format knows, one value; HELP and TYPE once per family, before its samples.
const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const VALUE = '"(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:[a-zA-Z_][a-zA-Z0-9_]*=${VALUE})(?:,[a-zA-Z_][a-zA-Z0-9_]*=${VALUE})*)\\})? (\\S+)$`);

function unescape(v: string): string {
  return v.replace(/\\([\\"n])/g, (_m, c: string) => (c === 'n' ? '\n' : c));
}

/** Every sample of the text; throws on a line the format does not allow, a family's HELP/TYPE out of place, or a series written twice. */
function parse(text: string): Sample[] {
  expect(text.endsWith('\n')).toBe(true);
  const samples: Sample[] = [];
  const seen = new Set<string>();
  const families = new Set<string>();
  let family: string | undefined;
  for (const line of text.slice(0, -1).split('\n')) {
    const meta = /^# (HELP|TYPE) (\S+) (.+)$/.exec(line);
    if (meta) {
      if (meta[1] === 'HELP') {
        expect(families.has(meta[2]!), `${meta[2]} described twice`).toBe(false);
        families.add(meta[2]!);
        family = meta[2]!;
      } else {
        expect(meta[2]).toBe(family);
        expect(meta[3]).toBe('gauge');
      }
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    expect(m[1], `${m[1]} outside its family`).toBe(family);
    const labels: Record<string, string> = {};
    for (const pair of (m[2] ?? '').matchAll(new RegExp(`([a-zA-Z_][a-zA-Z0-9_]*)=(${VALUE})`, 'g'))) labels[pair[1]!] = unescape(pair[2]!.slice(1, -1));
    const key = `${m[1]}${JSON.stringify(labels)}`;
    expect(seen.has(key), `series written twice: ${key}`).toBe(false);
    seen.add(key);
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

const value = (samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined =>
  samples.find((s) => s.name === name && JSON.stringify(s.labels) === JSON.stringify(labels))?.value;

const SESSION_VERDICTS = VERDICTS.filter((v) => VERDICT_TRAITS[v].kind === 'session');
const CLAIM_VERDICTS = VERDICTS.filter((v) => VERDICT_TRAITS[v].kind === 'claim');

/** Sessions on other machines (verdict remote) of one source, as reconcile judges them. */
function remoteSessions(sourceName: string, machines: readonly string[]): Finding[] {
  const sessions = machines.map((machine, i): SessionEntry => ({ source: sourceName, id: `s${i}`, machine, pid: 100 + i, status: 'active' }));
  return reconcile({ sessions, claims: [] }, { pids: new Map(), ports: new Map() }, FIXED_NOW, defaultPolicy(HOST));
}

describe('label values', () => {
  it.each([
    ['plain text stays', 'build-42', 'build-42'],
    ['a backslash is doubled', 'C:\\agents', 'C:\\\\agents'],
    ['a double quote is escaped', 'say "hi"', 'say \\"hi\\"'],
    ['a backslash before a quote stays two escapes', '\\"', '\\\\\\"'],
    ['a newline is \\n', 'two\nlines', 'two\\nlines'],
  ])('escapeLabelValue: %s', (_what, raw, escaped) => {
    expect(escapeLabelValue(raw)).toBe(escaped);
  });

  it.each([
    ['a newline is made visible first, never a line break', 'two\nlines', 'two^Jlines'],
    ['ESC and a CSI are inert', '\u001b[31mred', '^[[31mred'],
    ['an OSC 52 with its BEL', '\u001b]52;c;cm0=\u0007', '^[]52;c;cm0=^G'],
    ['a C1 CSI', '\u009b2J', '\\\\x9B2J'],
    ['a bidi override', 'a\u202eb', 'a<U+202E>b'],
    ['a lone surrogate (no valid UTF-8)', 'x\ud800', 'x<U+D800>'],
    ['quote and backslash after sanitizing', 'h"\\\u0007', 'h\\"\\\\^G'],
    ['a number', 42, '42'],
    ['nothing', undefined, ''],
  ])('labelValue: %s', (_what, raw, written) => {
    expect(labelValue(raw)).toBe(written);
  });

  it(`labelValue caps a long value at ${LABEL_VALUE_MAX} code points, marked "..." whatever the locale`, () => {
    const written = labelValue('h'.repeat(1000));
    expect(written).toBe(`${'h'.repeat(LABEL_VALUE_MAX - 3)}...`);
    // Counted after sanitizing: what is written fits, and an astral character is one point.
    expect(Array.from(labelValue('\u001b'.repeat(100)))).toHaveLength(LABEL_VALUE_MAX);
    expect(labelValue('😀'.repeat(LABEL_VALUE_MAX))).toBe('😀'.repeat(LABEL_VALUE_MAX));
    try {
      useAsciiEllipsis(false);
      expect(labelValue('h'.repeat(1000))).toBe(written);
      useAsciiEllipsis(true);
      expect(labelValue('h'.repeat(1000))).toBe(written);
    } finally {
      useAsciiEllipsis(false);
    }
  });
});

describe('prometheusText', () => {
  it('counts sessions and claims per verdict, source and host, every verdict written, zeros too', () => {
    const samples = parse(prometheusText(snapshotOf(demoFindings())));
    const sessions = samples.filter((s) => s.name === 'ghostwatch_sessions');
    // This host's rows, and the one remote machine the registry names: every session verdict each.
    expect(sessions).toHaveLength(2 * SESSION_VERDICTS.length);
    const here = (verdict: string) => value(samples, 'ghostwatch_sessions', { verdict, source: 'hypivisor', host: HOST });
    expect(Object.fromEntries(SESSION_VERDICTS.map((v) => [v, here(v)]))).toEqual({
      live: 4, ghost: 2, zombie: 1, reused: 1, superseded: 1, pending: 1, offline: 1, remote: 0, unverified: 1, suspended: 0,
    });
    expect(value(samples, 'ghostwatch_sessions', { verdict: 'remote', source: 'hypivisor', host: 'laptop.lan' })).toBe(1);
    expect(value(samples, 'ghostwatch_sessions', { verdict: 'ghost', source: 'hypivisor', host: 'laptop.lan' })).toBe(0);
    expect(CLAIM_VERDICTS.map((v) => value(samples, 'ghostwatch_claims', { verdict: v, source: 'hypivisor', host: HOST }))).toEqual([1, 1]);
    expect(value(samples, 'ghostwatch_problems')).toBe(7);
    expect(value(samples, 'ghostwatch_source_up', { source: 'hypivisor' })).toBe(1);
    expect(value(samples, 'ghostwatch_check_settled')).toBe(1);
    expect(value(samples, 'ghostwatch_check_timestamp_seconds')).toBe(FIXED_NOW / 1000);
    // The sum of the series is every finding: nothing counted twice or left out.
    expect(samples.filter((s) => s.name === 'ghostwatch_sessions' || s.name === 'ghostwatch_claims').reduce((n, s) => n + s.value, 0)).toBe(demoFindings().length);
  });

  it('an empty registry still writes every verdict of this host as 0, so no series vanishes when the last ghost goes', () => {
    const samples = parse(prometheusText(snapshotOf([])));
    expect(SESSION_VERDICTS.map((v) => value(samples, 'ghostwatch_sessions', { verdict: v, source: 'hypivisor', host: HOST }))).toEqual(SESSION_VERDICTS.map(() => 0));
    expect(CLAIM_VERDICTS.map((v) => value(samples, 'ghostwatch_claims', { verdict: v, source: 'hypivisor', host: HOST }))).toEqual([0, 0]);
  });

  type Case = { what: string; snap: EngineSnapshot; expected: Record<string, number | undefined>; families?: Record<string, boolean> };
  const series = (name: string, labels: Record<string, string> = {}) => `${name}${JSON.stringify(labels)}`;
  const cases: Case[] = [
    {
      what: 'a registry that cannot be read: up 0, and no zeros it does not know',
      snap: snapshotOf([], { sources: [source({ status: 'unreachable', cause: 'connection refused' })], settled: true }),
      expected: { [series('ghostwatch_source_up', { source: 'hypivisor' })]: 0, [series('ghostwatch_sessions', { verdict: 'ghost', source: 'hypivisor', host: HOST })]: undefined },
      families: { ghostwatch_sessions: false, ghostwatch_claims: false },
    },
    {
      what: 'a registry still connecting at the timeout counts as down, the check as not settled',
      snap: snapshotOf([], { sources: [source({ status: 'connecting' })], settled: false }),
      expected: { [series('ghostwatch_source_up', { source: 'hypivisor' })]: 0, [series('ghostwatch_check_settled')]: 0 },
    },
    {
      what: 'a registry looked for and not here (absent) has no up series and no zeros',
      snap: snapshotOf([], { sources: [source({ name: 'claude', status: 'absent' })] }),
      expected: { [series('ghostwatch_source_up', { source: 'claude' })]: undefined },
      families: { ghostwatch_sessions: false, ghostwatch_source_up: false },
    },
    {
      what: 'agentctl read from its files while its daemon is down is read: up 1 (check exits 0 or 1 for it)',
      snap: snapshotOf([], { sources: [source({ name: 'agentctl', status: 'files-only', claims: true })] }),
      expected: { [series('ghostwatch_source_up', { source: 'agentctl' })]: 1, [series('ghostwatch_claims', { verdict: 'held', source: 'agentctl', host: HOST })]: 0 },
    },
    {
      what: 'a source that offers no claims writes no claim zeros',
      snap: snapshotOf([], { sources: [source({ name: 'claude', status: 'watching', claims: false })] }),
      expected: { [series('ghostwatch_sessions', { verdict: 'live', source: 'claude', host: HOST })]: 0 },
      families: { ghostwatch_claims: false },
    },
    {
      what: 'the rows a source no longer reading still holds are counted (its last known), without zeros',
      snap: snapshotOf(remoteSessions('hypivisor', ['far']), { sources: [source({ status: 'auth-refused' })] }),
      expected: {
        [series('ghostwatch_sessions', { verdict: 'remote', source: 'hypivisor', host: 'far' })]: 1,
        [series('ghostwatch_sessions', { verdict: 'ghost', source: 'hypivisor', host: 'far' })]: undefined,
        [series('ghostwatch_source_up', { source: 'hypivisor' })]: 0,
      },
    },
    {
      what: 'two sources of one name are one up series, down if either is',
      snap: snapshotOf([], { sources: [source({ name: 'claude', status: 'watching' }), source({ name: 'claude', status: 'unreachable' })] }),
      expected: { [series('ghostwatch_source_up', { source: 'claude' })]: 0 },
    },
    {
      what: 'machines that differ only in what sanitizing shows alike are one series, their counts summed',
      snap: snapshotOf(remoteSessions('hypivisor', ['a\u001b', 'a^[', 'a\u001b'])),
      expected: { [series('ghostwatch_sessions', { verdict: 'remote', source: 'hypivisor', host: 'a^[' })]: 3 },
    },
    {
      what: 'names longer than the cap that share their first 125 characters are one series',
      snap: snapshotOf(remoteSessions('hypivisor', [`${'m'.repeat(200)}-one`, `${'m'.repeat(200)}-two`])),
      expected: { [series('ghostwatch_sessions', { verdict: 'remote', source: 'hypivisor', host: labelValue('m'.repeat(300)) })]: 2 },
    },
    {
      what: 'quotes, backslashes and a newline in a machine name are escaped and read back as written',
      snap: snapshotOf(remoteSessions('hypivisor', ['evil"} ghostwatch_problems 0\n#', 'back\\slash'])),
      expected: {
        [series('ghostwatch_sessions', { verdict: 'remote', source: 'hypivisor', host: 'evil"} ghostwatch_problems 0^J#' })]: 1,
        [series('ghostwatch_sessions', { verdict: 'remote', source: 'hypivisor', host: 'back\\slash' })]: 1,
        [series('ghostwatch_problems')]: 0,
      },
    },
    {
      what: 'a hostile source name is sanitized and escaped like a host',
      snap: snapshotOf([], { sources: [source({ name: 'hy"pi\u202e\u001b]0;x\u0007' })] }),
      expected: { [series('ghostwatch_source_up', { source: 'hy"pi<U+202E>^[]0;x^G' })]: 1 },
    },
    {
      what: 'an entry of this host under another spelling (FQDN, capitals) counts under this host',
      snap: snapshotOf(reconcile({ sessions: [{ source: 'hypivisor', id: 'x', machine: `${HOST.toUpperCase()}.example.com`, status: 'active' }], claims: [] }, { pids: new Map(), ports: new Map() }, FIXED_NOW, defaultPolicy(HOST))),
      expected: { [series('ghostwatch_sessions', { verdict: 'unverified', source: 'hypivisor', host: HOST })]: 1 },
    },
  ];
  it.each(cases)('$what', ({ snap, expected, families }) => {
    const text = prometheusText(snap);
    expect(unsafeOutput(text)).toBeUndefined();
    const samples = parse(text);
    for (const [key, want] of Object.entries(expected)) {
      const got = samples.find((s) => series(s.name, s.labels as Record<string, string>) === key)?.value;
      expect(got, key).toBe(want);
    }
    for (const [family, present] of Object.entries(families ?? {})) expect(samples.some((s) => s.name === family), family).toBe(present);
  });

  it('ssh hosts: up 1, down or connecting 0; their entries count under the ssh host, and every verdict of each is written', () => {
    const samples = parse(prometheusText(fleetEngine().getSnapshot()));
    expect(['build-42', 'gpu-7', 'build-99'].map((host) => value(samples, 'ghostwatch_ssh_host_up', { host }))).toEqual([1, 0, 0]);
    const on = (host: string, verdict: string) => value(samples, 'ghostwatch_sessions', { verdict, source: 'hypivisor', host });
    // b42-nightly is offline and its process gone on build-42: a ghost there.
    expect([on('build-42', 'live'), on('build-42', 'zombie'), on('build-42', 'ghost'), on('build-42', 'offline')]).toEqual([1, 1, 1, 0]);
    expect([on('gpu-7', 'unverified'), on('gpu-7', 'ghost'), on('build-99', 'unverified')]).toEqual([2, 0, 1]);
    for (const host of ['build-42', 'gpu-7', 'build-99', HOST]) expect(SESSION_VERDICTS.every((v) => on(host, v) !== undefined), host).toBe(true);
    const connecting = snapshotOf([], { hosts: [{ machine: 'new-box', dest: 'new-box', transport: 'ssh', state: 'connecting', connections: 0 }] });
    expect(value(parse(prometheusText(connecting)), 'ghostwatch_ssh_host_up', { host: 'new-box' })).toBe(0);
  });

  it('ghostwatch_leftovers, right after the claims: per source on this host, departed rows too; 0 for a reading source only where leftovers are looked at', () => {
    const { findings, fields } = leftoverSnapshot();
    const text = prometheusText(snapshotOf(findings, fields));
    const samples = parse(text);
    // The ghost's two and the departed agent's one, all of hypivisor, on this host.
    expect(samples.filter((s) => s.name === 'ghostwatch_leftovers')).toEqual([{ name: 'ghostwatch_leftovers', labels: { source: 'hypivisor', host: HOST }, value: 3 }]);
    const families = [...text.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]);
    expect(families.indexOf('ghostwatch_leftovers')).toBe(families.indexOf('ghostwatch_claims') + 1);
    // None left: 0 for the reading source, where they are looked at; nothing where they are not (not Linux, status).
    const none = parse(prometheusText(snapshotOf(demoFindings(), { os: { processTable: 'ok', leftoversTracked: true } })));
    expect(none.filter((s) => s.name === 'ghostwatch_leftovers')).toEqual([{ name: 'ghostwatch_leftovers', labels: { source: 'hypivisor', host: HOST }, value: 0 }]);
    expect(prometheusText(snapshotOf(demoFindings()))).not.toContain('ghostwatch_leftovers');
  });

  it('writes no sample timestamps (node_exporter refuses files with them) and describes every family once', () => {
    const text = prometheusText(fleetEngine().getSnapshot());
    for (const line of text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))) expect(line.replace(/\{.*\}/, '').split(' '), line).toHaveLength(2);
    expect(text.match(/^# TYPE \S+ gauge$/gm)).toHaveLength(text.match(/^# HELP /gm)!.length);
  });

  it('any hostile machine or source name gives text the format accepts, inert for a terminal, with one series per label set', () => {
    const anyName = fc.oneof(hostileString(6), fc.string({ unit: 'binary', maxLength: 300 }), fc.constantFrom('"', '\\', '\n', '\\n', '"}', '{', ','));
    fc.assert(
      fc.property(fc.array(anyName, { minLength: 1, maxLength: 6 }), anyName, (machines, sourceName) => {
        const findings = remoteSessions(sourceName, machines);
        const text = prometheusText(snapshotOf(findings, { sources: [source({ name: sourceName })], hosts: machines.slice(0, 2).map((machine) => ({ machine, dest: 'x', transport: 'ssh' as const, state: 'up' as const, connections: 1 })) }));
        expect(unsafeOutput(text)).toBeUndefined();
        const samples = parse(text);
        const total = samples.filter((s) => s.name === 'ghostwatch_sessions').reduce((n, s) => n + s.value, 0);
        expect(total).toBe(findings.length);
      }),
      { numRuns: 100 },
    );
  });
});

describe('checkFormat', () => {
  it.each([
    [undefined, false, 'text'],
    [undefined, true, 'json'],
    ['json', true, 'json'],
    ['prometheus', false, 'prometheus'],
    ['text', false, 'text'],
  ] as const)('--format %s with --json %s is %s', (format, json, expected) => {
    expect(checkFormat(format, json)).toBe(expected);
  });
  it.each([
    ['xml', false, '--format must be one of text, json, prometheus'],
    ['prometheus', true, '--json and --format prometheus name two formats: give one'],
  ] as const)('--format %s with --json %s is refused', (format, json, message) => {
    expect(() => checkFormat(format, json)).toThrow(message);
  });
});
