// `check --format prometheus` read by the real tools: the built CLI against a real `ghostwatch
// serve` registry with a live and a dead child process, its output checked by `promtool check
// metrics` (Debian's prometheus package) and served by a real node_exporter's textfile collector
// on a loopback port, written there by the very lines the README proposes for cron and systemd.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startRegistryServer, type RegistryServer } from '../../src/server/index.js';
import { runCli, runCommand } from '../support/cli.js';
import { describeOn } from '../support/platform.js';
import { freePort } from '../support/ports.js';
import { fileSleeper, killAndReap, spawnSleep } from '../support/processes.js';
import { BIN, BUILT } from '../support/tmux.js';
import { until } from '../support/wait.js';

function onPath(tool: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}
// Debian names the exporter prometheus-node-exporter; upstream's binary is node_exporter.
const PROMTOOL = onPath('promtool');
const NODE_EXPORTER = onPath('prometheus-node-exporter') ?? onPath('node_exporter');

/** README: /etc/cron.d/ghostwatch, read from the README itself (the line is tested as users copy it). */
const CRON_LINE = (() => {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const line = readme.split('\n').find((l) => l.startsWith('* * * * * root '));
  if (!line) throw new Error("README has no cron line ('* * * * * root …') under \"Metrics for Prometheus\"");
  return line;
})();
/** The shell line the README gives for cron and systemd (root's, running the check as `ana`). */
const TEXTFILE_LINE = CRON_LINE.replace(/^(\S+ ){5}root /, '');
/** README: the service's ExecStart (systemd reads "$$" as one "$"). */
const EXEC_START = `ExecStart=/bin/sh -c '${TEXTFILE_LINE.replaceAll('$', '$$$$')}'`;

const HOSTILE_MACHINE = 'evil"\\\n\u001b[31m} ghostwatch_problems 0 #';

interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** The samples of a text exposition, label values unescaped, in whatever order the writer put its labels. */
function samples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const pair of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!.replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c));
    }
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

function valueOf(all: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return all.find((s) => s.name === name && Object.keys(labels).length === Object.keys(s.labels).length && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}

function promtool(text: string): { code: number | null; out: string } {
  const r = spawnSync(PROMTOOL!, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

// Linux: the README's line runs the check through runuser, and `ss` names the exporter's sockets.
const describeLinux = describeOn(['linux'], 'runuser and ss are Linux tools', BUILT && PROMTOOL !== undefined && NODE_EXPORTER !== undefined);

describeLinux('check --format prometheus with promtool and node_exporter', () => {
  let server: RegistryServer;
  const sockets: WebSocket[] = [];
  const home = mkdtempSync(join(tmpdir(), 'gw-prom-home-'));
  const state = mkdtempSync(join(tmpdir(), 'gw-prom-state-'));
  const textfiles = mkdtempSync(join(tmpdir(), 'gw-prom-textfile-'));
  const bin = mkdtempSync(join(tmpdir(), 'gw-prom-bin-'));
  let exporter: ChildProcess | undefined;
  let exporterLog = '';
  let metricsUrl = '';

  const env = (registry: string): NodeJS.ProcessEnv => ({ ...process.env, HOME: home, XDG_STATE_HOME: state, XDG_CONFIG_HOME: home, HYPIVISOR_WS: registry, HYPI_TOKEN: '' });
  const gw = (args: string[], registry = server.url) => runCli(args, env(registry));

  async function register(id: string, pid: number, machine = hostname()): Promise<void> {
    const ws = new WebSocket(server.url);
    sockets.push(ws);
    await new Promise((r) => ws.once('open', r));
    const done = new Promise((r) => ws.once('message', r));
    ws.send(JSON.stringify({ id: 'r', method: 'register', params: { id, machine, cwd: '/tmp', port: 6200 + sockets.length, status: 'active', pid } }));
    await done;
  }

  /**
   * The README's line as root's cron or systemd runs it: the textfile folder is the test's, `ana`
   * the user running the test, and `ghostwatch` on PATH the built CLI pointed at the registry (and
   * extra arguments) the file `ghostwatch.env` names, as an install's own config would.
   */
  function runLine(line: string, registry: string, extra = ''): Promise<{ code: number; stderr: string }> {
    writeFileSync(join(bin, 'ghostwatch.env'), `export HOME='${home}' XDG_STATE_HOME='${state}' XDG_CONFIG_HOME='${home}' HYPIVISOR_WS='${registry}' HYPI_TOKEN=\nset -- "$@" --source hypivisor --timeout 5 ${extra}\n`);
    let shell = line.replaceAll('/var/lib/prometheus/node-exporter', textfiles).replace('runuser -u ana', `runuser -u ${userInfo().username}`);
    // runuser is root's (README: root runs the line for the user whose agents are checked).
    if (process.getuid?.() !== 0) shell = shell.replace(/runuser -u \S+ -- /, '');
    return runCommand('sh', ['-c', shell], { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` }).then((r) => ({ code: r.code, stderr: r.stderr }));
  }

  async function scrape(): Promise<Sample[]> {
    const text = await (await fetch(metricsUrl)).text();
    return samples(text);
  }

  beforeAll(async () => {
    server = await startRegistryServer({ port: 0, log: () => {} });
    await register('live-agent', fileSleeper(300).pid);
    const dead = spawnSleep(60);
    await register('dead-agent', dead.pid!);
    await killAndReap(dead);
    await register('far-agent', 4242, HOSTILE_MACHINE);
    // Two machine names that sanitize alike: one series, or node_exporter drops the duplicate.
    await register('twin-1', 4243, 'twin\u001b');
    await register('twin-2', 4244, 'twin^[');
    writeFileSync(join(bin, 'ghostwatch'), `#!/bin/sh\n. '${join(bin, 'ghostwatch.env')}'\nexec '${process.execPath}' '${BIN}' "$@"\n`);
    chmodSync(join(bin, 'ghostwatch'), 0o755);
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    // Loopback only, the textfile collector alone: nothing of this machine is exposed.
    exporter = spawn(NODE_EXPORTER!, ['--collector.disable-defaults', '--collector.textfile', `--collector.textfile.directory=${textfiles}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    exporter.stderr!.on('data', (d: Buffer) => (exporterLog += d.toString()));
    await until(
      async () => {
        if (exporter!.exitCode !== null) throw new Error(`node_exporter exited ${exporter!.exitCode}: ${exporterLog}`);
        return fetch(metricsUrl).then((r) => r.ok, () => false);
      },
      15_000,
      () => `node_exporter answering on ${metricsUrl}: ${exporterLog}`,
    );
  });

  afterAll(async () => {
    if (exporter) await killAndReap(exporter);
    for (const w of sockets.splice(0)) w.terminate();
    await server?.close();
  });

  it('the built check prints what promtool accepts, with the counts per verdict, source and host, and exits 1 for the ghost', async () => {
    const r = await gw(['check', '--format', 'prometheus', '--source', 'hypivisor']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    expect(promtool(r.stdout)).toEqual({ code: 0, out: '' });
    const all = samples(r.stdout);
    const here = { source: 'hypivisor', host: hostname() };
    expect(valueOf(all, 'ghostwatch_sessions', { verdict: 'live', ...here })).toBe(1);
    expect(valueOf(all, 'ghostwatch_sessions', { verdict: 'ghost', ...here })).toBe(1);
    expect(valueOf(all, 'ghostwatch_sessions', { verdict: 'zombie', ...here })).toBe(0);
    // The hostile machine: one series, its name inert and escaped, no sample of its own making.
    expect(valueOf(all, 'ghostwatch_sessions', { verdict: 'remote', source: 'hypivisor', host: 'evil"\\^J^[[31m} ghostwatch_problems 0 #' })).toBe(1);
    expect(all.filter((s) => s.name === 'ghostwatch_problems')).toEqual([{ name: 'ghostwatch_problems', labels: {}, value: 1 }]);
    expect(valueOf(all, 'ghostwatch_source_up', { source: 'hypivisor' })).toBe(1);
    expect(valueOf(all, 'ghostwatch_leftovers', here)).toBe(0);
    expect(valueOf(all, 'ghostwatch_check_settled')).toBe(1);
    expect(Math.abs(valueOf(all, 'ghostwatch_check_timestamp_seconds')! - Date.now() / 1000)).toBeLessThan(600);
  });

  it("the README's cron line writes the file atomically whatever check's exit code, node_exporter serves it, and the ghost's series stays at 0 once reaped", async () => {
    // check exits 1 (a ghost): the line still installs the report.
    const first = await runLine(CRON_LINE.replace(/^(\S+ ){5}root /, ''), server.url);
    expect(first).toEqual({ code: 0, stderr: '' });
    expect(readdirSync(textfiles)).toEqual(['ghostwatch.prom']);
    expect(promtool(readFileSync(join(textfiles, 'ghostwatch.prom'), 'utf8'))).toEqual({ code: 0, out: '' });
    let all = await until(async () => {
      const s = await scrape();
      return s.some((x) => x.name === 'ghostwatch_sessions') && s;
    }, 10_000, 'ghostwatch_sessions on node_exporter');
    const here = { source: 'hypivisor', host: hostname() };
    expect(valueOf(all, 'node_textfile_scrape_error')).toBe(0);
    expect(valueOf(all, 'ghostwatch_sessions', { verdict: 'ghost', ...here })).toBe(1);
    expect(valueOf(all, 'ghostwatch_sessions', { verdict: 'live', ...here })).toBe(1);
    expect(valueOf(all, 'ghostwatch_sessions', { verdict: 'remote', source: 'hypivisor', host: 'evil"\\^J^[[31m} ghostwatch_problems 0 #' })).toBe(1);
    expect(valueOf(all, 'ghostwatch_sessions', { verdict: 'remote', source: 'hypivisor', host: 'twin^[' })).toBe(2);
    expect(valueOf(all, 'ghostwatch_problems')).toBe(1);
    expect(valueOf(all, 'ghostwatch_source_up', { source: 'hypivisor' })).toBe(1);
    // node_exporter logs a duplicate series or a sample timestamp as an error and drops it.
    expect(exporterLog).not.toMatch(/level=error/);

    // Reaped: check exits 0, and the ghost's series reads 0 instead of vanishing.
    expect((await gw(['reap', '--yes', '--source', 'hypivisor'])).code).toBe(0);
    expect(await runLine(CRON_LINE.replace(/^(\S+ ){5}root /, ''), server.url)).toEqual({ code: 0, stderr: '' });
    all = await scrape();
    expect(valueOf(all, 'node_textfile_scrape_error')).toBe(0);
    expect(valueOf(all, 'ghostwatch_sessions', { verdict: 'ghost', ...here })).toBe(0);
    expect(valueOf(all, 'ghostwatch_problems')).toBe(0);
    expect(exporterLog).not.toMatch(/level=error/);
  }, 60_000);

  it('a registry that cannot be read: check exits 2 and still writes source_up 0; a run that prints nothing keeps the last file', async () => {
    const down = 'ws://127.0.0.1:9/ws';
    const direct = await gw(['check', '--format', 'prometheus', '--source', 'hypivisor', '--timeout', '3'], down);
    expect(direct.code).toBe(2);
    expect(direct.stderr).toMatch(/^ghostwatch: hypivisor at ws:\/\/127\.0\.0\.1:9\/ws: connection refused/);
    expect(promtool(direct.stdout)).toEqual({ code: 0, out: '' });
    expect(valueOf(samples(direct.stdout), 'ghostwatch_source_up', { source: 'hypivisor' })).toBe(0);
    // Unknown is not zero: no session counts for a registry not read.
    expect(samples(direct.stdout).some((s) => s.name === 'ghostwatch_sessions')).toBe(false);

    // The systemd service's line (its "$$" read as "$"): the exit code 2 still installs the report.
    const line = EXEC_START.replace(/^ExecStart=\/bin\/sh -c '(.*)'$/, '$1').replaceAll('$$', '$');
    expect(line).toBe(TEXTFILE_LINE);
    const r = await runLine(line, down);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/connection refused/);
    const all = await until(async () => {
      const s = await scrape();
      return valueOf(s, 'ghostwatch_source_up', { source: 'hypivisor' }) === 0 && s;
    }, 10_000, 'ghostwatch_source_up 0 on node_exporter');
    expect(valueOf(all, 'node_textfile_scrape_error')).toBe(0);

    // A check that prints nothing (a bad flag: exit 2, one line on stderr): the last report stays,
    // its timestamp ageing, no temp file left behind, and the line fails.
    const before = readFileSync(join(textfiles, 'ghostwatch.prom'), 'utf8');
    const mtime = statSync(join(textfiles, 'ghostwatch.prom')).mtimeMs;
    const bad = await runLine(TEXTFILE_LINE, server.url, '--no-such-flag');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('ghostwatch: unknown option --no-such-flag\n');
    expect(readdirSync(textfiles)).toEqual(['ghostwatch.prom']);
    expect(readFileSync(join(textfiles, 'ghostwatch.prom'), 'utf8')).toBe(before);
    expect(statSync(join(textfiles, 'ghostwatch.prom')).mtimeMs).toBe(mtime);
  }, 60_000);

  it('node_exporter listens on loopback only', () => {
    const pid = exporter!.pid!;
    const listening = execFileSync('ss', ['-Hltnp'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.includes(`pid=${pid},`));
    expect(listening.length).toBeGreaterThan(0);
    for (const l of listening) expect(l.split(/\s+/)[3]).toMatch(/^127\.0\.0\.1:\d+$/);
  });
});
