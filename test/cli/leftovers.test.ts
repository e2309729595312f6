// What a dead agent leaves behind, through the built CLI and runs from cron: a `check` while the
// agent lives learns its tree (kept in $XDG_STATE_HOME/ghostwatch/descendants.json), the agent is
// SIGKILLed, and the next `check` lists its leftovers (JSON, text, Prometheus); `reap` leaves
// processes alone unless --leftovers is given, and then ends them: SIGTERM, SIGKILL after the grace.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { claudeRecord } from '../support/claude-records.js';
import { cliCopyForAnyUser, otherUserRequirement, runCli, runCommand } from '../support/cli.js';
import { describeOn } from '../support/platform.js';
import { alive, killAndReap } from '../support/processes.js';
import { BUILT } from '../support/tmux.js';
import { until } from '../support/wait.js';

const AGENT = join(import.meta.dirname, '../support/leftover-agent.mjs');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gw-leftovers-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const startTicks = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
};
const ppidOf = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
};

describeOn(['linux'], 'leftovers are read from Linux /proc', BUILT)('check and reap and what a dead agent left running', () => {
  it('check learns the tree, lists the leftovers once the agent is dead; reap leaves them alone without --leftovers and ends them with it', async () => {
    if (!BUILT) throw new Error('needs a built dist/ (npm run build)');
    const claude = join(dir, 'claude');
    const state = join(dir, 'state');
    mkdirSync(join(claude, 'sessions'), { recursive: true });
    const env = { PATH: process.env.PATH, HOME: dir, XDG_STATE_HOME: state, XDG_CONFIG_HOME: join(dir, 'config'), NO_COLOR: '1', HYPIVISOR_WS: 'ws://127.0.0.1:9/ws' };
    const gw = (args: string[]) => runCli([...args, '--source', 'claude', '--claude-dir', claude], env);

    const agent = spawn(process.execPath, [AGENT], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve) => createInterface({ input: agent.stdout! }).once('line', resolve));
    const { listener, port, burner } = JSON.parse(line) as { listener: number; port: number; burner: number };
    try {
      writeFileSync(join(claude, 'sessions', `${agent.pid}.json`), JSON.stringify(claudeRecord(agent.pid!, 'sess-leftovers', { procStart: String(startTicks(agent.pid!)), cwd: '/repo/web' })));

      // 1. Alive: live, nothing left over, and its tree is remembered for the next run.
      const first = await gw(['check', '--json']);
      expect([first.code, first.stderr]).toEqual([0, '']);
      const live = JSON.parse(first.stdout).findings.find((f: { id: string }) => f.id === 'sess-leftovers');
      expect([live.verdict, live.leftovers]).toEqual(['live', undefined]);
      const memory = join(state, 'ghostwatch', 'descendants.json');
      expect(existsSync(memory)).toBe(true);
      const remembered = JSON.parse(readFileSync(memory, 'utf8')).agents.flatMap((a: { descendants: { pid: number }[] }) => a.descendants.map((d) => d.pid));
      expect(remembered.sort()).toEqual([listener, burner].sort());

      // 2. SIGKILLed: the record stays (as Claude Code's does), a ghost, and its leftovers are listed.
      await killAndReap(agent);
      await until(() => ppidOf(listener) !== agent.pid, 5_000, 'the listener reparented');
      const second = await gw(['check', '--json']);
      expect(second.code).toBe(1);
      const ghost = JSON.parse(second.stdout).findings.find((f: { id: string }) => f.id === 'sess-leftovers');
      expect(ghost.verdict).toBe('ghost');
      expect(ghost.leftovers.map((l: { pid: number }) => l.pid).sort()).toEqual([listener, burner].sort());
      expect(ghost.leftovers.find((l: { pid: number }) => l.pid === listener)).toMatchObject({ ports: [port], agentPid: agent.pid, otherUser: false, cmd: expect.stringContaining(process.execPath) });

      const text = await gw(['check']);
      expect(text.stdout).toMatch(new RegExp(`left running: pid ${listener} .*listens on :${port}`));
      expect(text.stdout).toMatch(/; 2 leftovers of 1 dead agent$/m);
      const metrics = await gw(['check', '--format', 'prometheus']);
      const host = hostname();
      expect(metrics.stdout).toContain(`# TYPE ghostwatch_leftovers gauge\nghostwatch_leftovers{source="claude",host="${host}"} 2\n`);
      const families = [...metrics.stdout.matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1]);
      expect(families.indexOf('ghostwatch_leftovers')).toBe(families.indexOf('ghostwatch_sessions') + 1);

      // 3. reap without --leftovers evicts the ghost and signals nothing; it says what it left alone.
      const reap = await gw(['reap', '--yes']);
      expect(reap.code).toBe(0);
      expect(reap.stderr).toContain('2 processes dead agents left running, left alone (reap --leftovers ends them)');
      expect(reap.stdout).toMatch(/^evicted +session +claude +sess-leftovers/m);
      expect([alive(listener), alive(burner)]).toEqual([true, true]);

      // 4. Gone from its registry, the agent's leftovers are still known (a departed row); --leftovers ends them.
      const after = JSON.parse((await gw(['check', '--json'])).stdout);
      expect(after.findings.find((f: { id: string }) => f.id === 'sess-leftovers')).toBeUndefined();
      expect(after.departed).toEqual([expect.objectContaining({ id: 'sess-leftovers', departed: true, problem: false, verdict: 'ghost' })]);
      const dry = await gw(['reap', '--leftovers', '--dry-run']);
      expect(dry.stdout).toMatch(new RegExp(`^leftover +process +claude +pid ${listener} `, 'm'));
      expect(dry.stdout).toContain('dry run: would end 2 leftover processes; nothing was changed');
      expect([alive(listener), alive(burner)]).toEqual([true, true]);
      const ended = await gw(['reap', '--yes', '--leftovers', '--kill-grace', '1']);
      expect([ended.code, ended.stderr, ended.stdout]).toEqual([0, '', expect.any(String)]);
      expect(ended.stdout).toMatch(new RegExp(`^ended +process +claude +pid ${listener} `, 'm'));
      expect(ended.stdout).toMatch(new RegExp(`^killed +process +claude +pid ${burner} `, 'm'));
      expect(ended.stdout).toContain('leftovers: ended 2 (1 after SIGKILL), already gone 0, skipped 0, refused 0, failed 0');
      await until(() => !alive(listener) && !alive(burner), 5_000, 'both gone');
      const audit = readFileSync(join(state, 'ghostwatch', 'evictions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(audit.filter((l) => l.kind === 'intent' && l.action.type === 'signal').map((l) => `${l.action.signal} ${l.action.pid}`).sort()).toEqual([`SIGKILL ${burner}`, `SIGTERM ${burner}`, `SIGTERM ${listener}`].sort());

      const last = JSON.parse((await gw(['check', '--json'])).stdout);
      expect([last.departed, last.findings.length]).toEqual([undefined, 0]);
    } finally {
      await killAndReap(agent);
      for (const pid of [listener, burner]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    }
  }, 90_000);
});

const asNobody = otherUserRequirement('to run the CLI as another user');
describeOn(['linux'], 'leftovers are read from Linux /proc', asNobody === undefined || process.env.CI === 'true')("another user's leftovers, when ghostwatch does not run as root", () => {
  it("a dead root agent's processes are learned by `check` as nobody, and never listed: not nobody's to end", async () => {
    if (asNobody !== undefined) throw new Error(`CI=true and this test ${asNobody}`);
    const copy = cliCopyForAnyUser('gw-leftovers-nobody-');
    const claude = join(copy, 'claude');
    mkdirSync(join(claude, 'sessions'), { recursive: true, mode: 0o755 });
    const state = join(copy, 'state');
    mkdirSync(state, { mode: 0o700 });
    const { chownSync } = await import('node:fs');
    chownSync(state, 65534, 65534);
    const env = { PATH: process.env.PATH, HOME: copy, XDG_STATE_HOME: state, XDG_CONFIG_HOME: join(copy, 'none'), NO_COLOR: '1', HYPIVISOR_WS: 'ws://127.0.0.1:9/ws' };
    const check = () =>
      runCommand('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, join(copy, 'bin/ghostwatch.js'), 'check', '--json', '--source', 'claude', '--claude-dir', claude], env);
    const agent = spawn(process.execPath, [AGENT], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve) => createInterface({ input: agent.stdout! }).once('line', resolve));
    const { listener, burner } = JSON.parse(line) as { listener: number; burner: number };
    try {
      const record = join(claude, 'sessions', `${agent.pid}.json`);
      writeFileSync(record, JSON.stringify(claudeRecord(agent.pid!, 'root-agent', { procStart: String(startTicks(agent.pid!)) })));
      chmodSync(record, 0o644);
      const first = await check();
      expect(first.stderr).toBe('');
      expect(JSON.parse(first.stdout).findings[0]).toMatchObject({ id: 'root-agent', verdict: 'live' });
      // nobody learned the root agent's tree (its children lists are readable by anyone)...
      const remembered = JSON.parse(readFileSync(join(state, 'ghostwatch', 'descendants.json'), 'utf8')).agents.flatMap((a: { descendants: { pid: number }[] }) => a.descendants.map((d) => d.pid));
      expect(remembered.sort()).toEqual([listener, burner].sort());
      await killAndReap(agent);
      // ...and once it is dead, lists none of them: they are root's.
      const second = await check();
      const ghost = JSON.parse(second.stdout).findings.find((f: { id: string }) => f.id === 'root-agent');
      expect([ghost.verdict, ghost.leftovers]).toEqual(['ghost', undefined]);
      expect([alive(listener), alive(burner)]).toEqual([true, true]);
    } finally {
      await killAndReap(agent);
      for (const pid of [listener, burner]) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      rmSync(copy, { recursive: true, force: true });
    }
  }, 60_000);
});
