// The line between the demo and an agent in a tmux pane (src/demo/agent-link.ts), on real Unix
// sockets: only the connection that says the key is the agent's; its lines reach the demo; the
// demo's end() is end of file for the agent; the agent's process ending closes the line, SIGKILL
// too; the demo dying is end of file for the agent; the folder goes once the agent is connected.
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectLink, openLink } from '../../src/demo/agent-link.js';
import { until } from '../support/wait.js';

/** A process on the agent's side: connects, says the key, writes `lines`, then waits. */
function agentProcess(path: string, key: string, lines: readonly string[]) {
  const code = `
    const { connect } = require('node:net');
    const s = connect({ path: ${JSON.stringify(path)}, allowHalfOpen: true }, () => {
      s.write(${JSON.stringify(`${key}\n${lines.map((l) => `${l}\n`).join('')}`)});
    });
    s.on('end', () => { console.log('end'); process.exit(0); });
    setInterval(() => {}, 1000);`;
  return spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
}

describe('the agent link', () => {
  it('takes the connection that says the key, hands on its lines, and removes its folder', async () => {
    const lines: string[] = [];
    const link = await openLink((l) => lines.push(l));
    expect(statSync(dirname(link.path)).mode & 0o777).toBe(0o700);
    // A stranger first: dropped.
    const stranger = connect(link.path);
    const strangerClosed = new Promise((resolve) => stranger.on('close', resolve).on('error', () => {}));
    stranger.write('not-the-key\nhello\n');
    await strangerClosed;
    const agent = await connectLink(link.path, link.key);
    agent.write('{"kind":"staged","text":"x"}\n');
    await link.connected;
    await until(() => lines.length === 1, 5_000, 'the report');
    expect(lines).toEqual(['{"kind":"staged","text":"x"}']);
    expect(existsSync(dirname(link.path))).toBe(false);
    agent.destroy();
    await link.closed;
  });

  it('end() is end of file for the agent, and the line closes when its process ends', async () => {
    const link = await openLink(() => {});
    const child = agentProcess(link.path, link.key, []);
    await link.connected;
    let said = '';
    child.stdout!.on('data', (d: Buffer) => (said += d.toString()));
    link.end();
    await link.closed;
    await new Promise((resolve) => child.once('exit', resolve));
    expect(said).toBe('end\n');
  });

  it('ends before the agent connects are kept: it reads end of file as soon as it does', async () => {
    const link = await openLink(() => {});
    link.end();
    const child = agentProcess(link.path, link.key, []);
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    await link.closed;
  });

  it('closes when the agent is SIGKILLed', async () => {
    const lines: string[] = [];
    const link = await openLink((l) => lines.push(l));
    const child = agentProcess(link.path, link.key, ['one']);
    await link.connected;
    await until(() => lines.includes('one'), 5_000, 'the line');
    child.kill('SIGKILL');
    await link.closed;
  });

  it('is end of file for the agent when the demo side goes', async () => {
    const link = await openLink(() => {});
    const agent = await connectLink(link.path, link.key);
    await link.connected;
    const ended = new Promise((resolve) => agent.once('end', resolve));
    link.destroy();
    await ended;
    agent.destroy();
  });
});
