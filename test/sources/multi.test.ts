// Several registries at once: one engine over agentctl (a test daemon), the Claude files and a
// real `ghostwatch serve`; a claim linked to a holder in another source only by the very same id;
// and `ghostwatch check` with three --source kinds as a real process.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Finding } from '../../src/core/types.js';
import { AgentctlSource } from '../../src/sources/agentctl/index.js';
import { claudeSources } from '../../src/sources/claude/index.js';
import { TestAgentctlDaemon } from '../support/agentctl-daemon.js';
import { runCli } from '../support/cli.js';
import { agent, deadPid, engineFor, HOST, onCleanup, serve, sleeper, source, tempDir, until } from '../engine/helpers.js';

const CLAUDE_ID = '5f0c2d7e-1b2a-4c3d-9e8f-0a1b2c3d4e5f';
const by = (findings: readonly Finding[], src: string, id: string) => findings.find((f) => f.source === src && f.id === id);

async function setup(claudePid: number) {
  const root = tempDir();
  const daemon = new TestAgentctlDaemon({ dir: root });
  await daemon.start();
  onCleanup(() => daemon.stop());
  // A lock from a daemon older than v1.9: no pid, held by its session, which agentctl no longer lists.
  daemon.addLock({ directory: '/work/app', type: 'auto', sessionId: CLAUDE_ID });
  daemon.addLock({ directory: '/work/other', type: 'auto', sessionId: CLAUDE_ID.toUpperCase() });
  const claudeDir = join(root, '.claude');
  mkdirSync(join(claudeDir, 'sessions'), { recursive: true });
  writeFileSync(join(claudeDir, 'sessions', `${claudePid}.json`), JSON.stringify({ pid: claudePid, sessionId: CLAUDE_ID, cwd: '/work/app', startedAt: Date.now() }));
  return { root, daemon, claudeDir, claimsDir: join(root, '.claude-sessions') };
}

describe('several sources at once', () => {
  it('one table over every source; a claim finds its holder in another source only by the exact id', async () => {
    const live = sleeper();
    const s = await setup(live.pid);
    const registry = await serve();
    await agent(registry.url, 'pi-1', { pid: live.pid });
    const sources = [
      source(registry.url),
      new AgentctlSource({ socketPath: s.daemon.socketPath, host: HOST, pollIntervalMs: 100 }),
      ...claudeSources({ claudeDirs: [s.claudeDir], claimsDir: s.claimsDir }, HOST, join(s.root, 'trash')),
    ];
    const engine = engineFor(sources);
    const snap = await until(() => {
      const x = engine.getSnapshot();
      return x.settled && x.findings.length === 4 ? x : undefined;
    }, 5000, 'four findings');
    expect(snap.sources.map((x) => `${x.name}:${x.status}`)).toEqual([
      'hypivisor:connected',
      'agentctl:connected',
      'claude:watching',
      'claude-view:absent',
      'claude-sessions:absent',
    ]);
    expect(by(snap.findings, 'hypivisor', 'pi-1')?.verdict).toBe('live');
    expect(by(snap.findings, 'claude', CLAUDE_ID)?.verdict).toBe('live');
    const linked = by(snap.findings, 'agentctl', '/work/app')!;
    expect(linked).toMatchObject({ verdict: 'held', reason: `held by ${CLAUDE_ID} (in claude), which is live` });
    expect(linked.evidence.holder).toMatchObject({ present: true, source: 'claude', verdict: 'live' });
    // Upper case is not the same id: no link, so agentctl's own view stands (its holder is gone).
    expect(by(snap.findings, 'agentctl', '/work/other')).toMatchObject({ verdict: 'stale-claim', reason: expect.stringMatching(/not in the registry/) });

    // The Claude session dies: the lock it holds elsewhere turns stale, saying where its holder is.
    live.kill('SIGKILL');
    await until(() => by(engine.getSnapshot().findings, 'agentctl', '/work/app')?.verdict === 'stale-claim', 5000, 'lock stale');
    expect(by(engine.getSnapshot().findings, 'agentctl', '/work/app')!.reason).toMatch(new RegExp(`holder ${CLAUDE_ID} \\(in claude\\) is ghost`));
  });

  it('check --json with three --source kinds: one object, one state per source, exit 1 on problems', async () => {
    const gone = await deadPid();
    const s = await setup(gone);
    const registry = await serve();
    const out = await runCli(
      ['check', '--json', '--source', 'hypivisor,agentctl', '--source', 'claude', '--registry', registry.url,
        '--agentctl-socket', s.daemon.socketPath, '--claude-dir', s.claudeDir, '--claude-sessions-dir', s.claimsDir],
      { ...process.env, XDG_CONFIG_HOME: tempDir(), XDG_STATE_HOME: tempDir(), HYPI_TOKEN: '' },
    );
    expect(out.stderr).toBe('');
    expect(out.code).toBe(1);
    const json = JSON.parse(out.stdout) as { sources: { name: string; status: string; connected: boolean }[]; findings: Finding[] };
    expect(json.sources.map((x) => [x.name, x.status, x.connected])).toEqual([
      ['hypivisor', 'connected', true],
      ['agentctl', 'connected', true],
      ['claude', 'watching', true],
      ['claude-view', 'absent', false],
      ['claude-sessions', 'absent', false],
    ]);
    expect(json.findings.map((f) => `${f.source}/${f.kind}/${f.verdict}`).sort()).toEqual([
      'agentctl/claim/stale-claim',
      'agentctl/claim/stale-claim',
      'claude/session/ghost',
    ]);
  });
});
