// `ghostwatch reap` over ssh, through the built CLI with an `ssh` on PATH (a fake client running
// the real probe loop, tests/support/fake-ssh.ts): a ghost of a host verified over ssh is
// re-probed there and evicted, its audit line naming the host and the transport; a live entry
// of that host and the entries of a host that refuses the key are left alone.
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { fakeSsh } from '../support/fake-ssh.js';
import { agent, deadPid, listNodes, serve, sleeper, tempDir } from '../engine/helpers.js';

describe('reap over ssh', () => {
  it('evicts a remote ghost after re-probing it on its host; the audit line names the host and ssh', async () => {
    if (!existsSync(join(import.meta.dirname, '../../dist'))) throw new Error('run npm run build first: this test runs the built CLI');
    const reg = await serve();
    const live = sleeper();
    await agent(reg.url, 'ghost-41', { machine: 'build-41', pid: await deadPid() });
    await agent(reg.url, 'live-41', { machine: 'build-41', pid: live.pid });
    await agent(reg.url, 'ghost-noauth', { machine: 'noauth', pid: await deadPid() });
    const ssh = fakeSsh();
    const state = tempDir();
    const env = { ...process.env, PATH: `${ssh.dir}:${process.env.PATH ?? ''}`, HOME: state, HYPIVISOR_WS: reg.url, XDG_CONFIG_HOME: '/nonexistent', XDG_STATE_HOME: state, NO_COLOR: '1' };
    const run = await runCli(['reap', '--yes', '--ssh', 'build-41=build-41', '--ssh', 'noauth=noauth-dest'], env);
    expect(run.code, `reap said:\n${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/^ghost +session ghost-41 pid \d+: .*\(via ssh build-41\)$/m);
    expect(run.stdout).toMatch(/^evicted +session ghost-41 pid \d+/m);
    expect(run.stdout).not.toMatch(/live-41|ghost-noauth/);
    expect(run.stdout).toMatch(/^evicted 1, already gone 0, skipped 0, refused 0, failed 0$/m);
    const lines = readFileSync(join(state, 'ghostwatch', 'evictions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const intent = lines.find((l) => l.kind === 'intent');
    expect(intent).toMatchObject({ host: hostname(), via: 'ssh build-41', remoteHost: 'build-41', transport: 'ssh', verdict: 'ghost', action: { id: 'ghost-41' } });
    expect((await listNodes(reg.url)).map((n) => n.id).sort()).toEqual(['ghost-noauth', 'live-41']);
    expect(ssh.dests().sort()).toEqual(['build-41', 'noauth-dest']);
  });
});
