// Nothing from outside reaches the terminal raw: the built CLI, against a registry that sends
// generated hostile strings everywhere it can (ids, machines, cwds, statuses, pids, claims, its
// error answers), and with hostile input of its own (flags, environment, config file). For every
// output path — check, check --json, reap --dry-run, reap --yes, error lines — no byte of ESC,
// another C0 control, C1, bidi or zero-width leaves the process unescaped.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadPid } from '../engine/helpers.js';
import { startHostileAgentctl } from '../support/hostile-agentctl.js';
import { hostileString, unsafeOutput } from '../support/hostile.js';
import { startScriptedRegistry } from '../support/scripted-registry.js';
import { BIN } from '../support/tmux.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const built = existsSync(join(ROOT, 'dist/src/cli/main.js'));
const dirs: string[] = [];

interface Run {
  readonly code: number;
  readonly stdout: Buffer;
  readonly stderr: Buffer;
}

/** The built CLI, its output as bytes: a stray byte must not hide in a decoded string. */
function gw(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env, encoding: 'buffer', timeout: 20_000 }, (error, stdout, stderr) =>
      resolve({ code: typeof error?.code === 'number' ? error.code : error ? 99 : 0, stdout, stderr }),
    );
  });
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-hostile-'));
  dirs.push(dir);
  return dir;
}

function baseEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, XDG_STATE_HOME: tempDir(), XDG_CONFIG_HOME: tempDir(), HYPI_TOKEN: '', HYPIVISOR_WS: '', NO_COLOR: '1', ...extra };
}

function expectSafe(run: Run, what: string): void {
  expect(unsafeOutput(run.stdout), `${what}: stdout`).toBeUndefined();
  expect(unsafeOutput(run.stderr), `${what}: stderr`).toBeUndefined();
}

afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe.runIf(built)('hostile strings from a registry', () => {
  let dead: number;
  beforeAll(async () => {
    dead = await deadPid();
  });

  /** A registry whose every string is hostile; its answers to deregister and release_claim too. */
  async function hostileRegistry(strings: readonly string[], run: (env: NodeJS.ProcessEnv, nodes: { id: string; cwd: string }[]) => Promise<void>) {
    const [a = '', b = '', c = '', d = ''] = strings;
    const here = hostname();
    const nodes = [
      { id: `ghost-${a}`, machine: here, cwd: b, port: 1, status: c, pid: dead },
      { id: `far-${b}`, machine: d, cwd: a, port: 2, status: 'active', pid: 4242 },
      { id: `odd-${c}`, machine: here, cwd: d, port: 3, status: a, pid: d },
    ];
    const claims = [{ resource: `/work/${d}`, holder: `ghost-${a}`, pid: dead, note: b }];
    const registry = await startScriptedRegistry({
      init: () => ({ event: 'init', nodes, protocol_version: '1', claims }),
      answer: (req) => {
        if (req.method === 'list_nodes') return { id: req.id, result: nodes };
        if (req.method === 'list_claims') return { id: req.id, result: claims };
        return { id: req.id, error: `${d} says no ${a}` };
      },
    });
    try {
      await run(baseEnv({ HYPIVISOR_WS: registry.url }), [...nodes, { id: claims[0]!.resource, cwd: '' }]);
    } finally {
      await registry.close();
    }
  }
  const strings = fc.array(hostileString(), { minLength: 4, maxLength: 4 });
  const RUNS = { numRuns: 4 };

  it('check: the table', async () => {
    await fc.assert(
      fc.asyncProperty(strings, (s) =>
        hostileRegistry(s, async (env) => {
          const run = await gw(['check', '--timeout', '5'], env);
          expect(run.code, run.stderr.toString()).toBe(1);
          expectSafe(run, 'check');
        }),
      ),
      RUNS,
    );
  }, 60_000);

  it('check --json: escaped as \\uXXXX, and the same strings parse back out', async () => {
    await fc.assert(
      fc.asyncProperty(strings, (s) =>
        hostileRegistry(s, async (env, rows) => {
          const run = await gw(['check', '--json', '--timeout', '5'], env);
          expect(run.code, run.stderr.toString()).toBe(1);
          expectSafe(run, 'check --json');
          const out = JSON.parse(run.stdout.toString('utf8')) as { findings: { id: string; entry: { cwd?: string } }[] };
          expect(out.findings.map((f) => f.id).sort()).toEqual(rows.map((r) => r.id).sort());
          expect(out.findings.find((f) => f.id === rows[0]!.id)?.entry.cwd).toBe(rows[0]!.cwd);
        }),
      ),
      RUNS,
    );
  }, 60_000);

  it('reap --dry-run: the plan', async () => {
    await fc.assert(
      fc.asyncProperty(strings, (s) =>
        hostileRegistry(s, async (env) => {
          const run = await gw(['reap', '--dry-run', '--timeout', '5'], env);
          expect(run.code, run.stderr.toString()).toBe(0);
          expect(run.stdout.toString()).toMatch(/dry run: would evict/);
          expectSafe(run, 'reap --dry-run');
        }),
      ),
      RUNS,
    );
  }, 60_000);

  it('reap --yes: the outcome lines, quoting the registry\'s refusals', async () => {
    await fc.assert(
      fc.asyncProperty(strings, (s) =>
        hostileRegistry(s, async (env) => {
          const run = await gw(['reap', '--yes', '--timeout', '5'], env);
          expect(run.code, run.stderr.toString()).toBe(1);
          expect(run.stdout.toString()).toMatch(/^refused/m);
          expectSafe(run, 'reap --yes');
        }),
      ),
      RUNS,
    );
  }, 60_000);

  it('reap --yes against agentctl: its refusals (message and code) and record statuses', async () => {
    await fc.assert(
      fc.asyncProperty(strings, async ([a = '', b = '', c = '', d = '']) => {
        const dir = tempDir();
        const daemon = await startHostileAgentctl(
          join(dir, 'agentctl.sock'),
          {
            sessions: [{ id: `ghost-${a}`, adapter: b, status: c, pid: dead, cwd: d, startedAt: new Date().toISOString() }],
            locks: [{ directory: `/work/${b}`, type: 'manual', lockedBy: c, reason: d, lockedAt: new Date().toISOString() }],
            warnings: [a, b],
          },
          { code: c, message: `${d} no ${a}` },
        );
        try {
          const env = baseEnv();
          const args = ['--source', 'agentctl', '--agentctl-socket', daemon.socketPath, '--timeout', '5'];
          const plan = await gw(['reap', '--dry-run', ...args], env);
          expect(plan.code, plan.stderr.toString()).toBe(0);
          expectSafe(plan, 'reap --dry-run (agentctl)');
          const run = await gw(['reap', '--yes', ...args], env);
          expect(run.code, run.stderr.toString()).toBe(1);
          expect(run.stdout.toString()).toMatch(/^refused .*: agentctl: /m);
          expectSafe(run, 'reap --yes (agentctl)');
          const check = await gw(['check', ...args], env);
          expectSafe(check, 'check (agentctl)');
          const json = await gw(['check', '--json', ...args], env);
          expectSafe(json, 'check --json (agentctl)');
        } finally {
          await daemon.close();
        }
      }),
      RUNS,
    );
  }, 90_000);
});

describe.runIf(built)('hostile input of the user', () => {
  it('never reaches the terminal raw through an error line', async () => {
    await fc.assert(
      fc.asyncProperty(hostileString(3), fc.nat(4), async (s, which) => {
        const config = tempDir();
        mkdirSync(join(config, 'ghostwatch'));
        // No program can be given a NUL in an argument or a variable (C strings end there): those get the next control character.
        const a = s.replaceAll('\u0000', '\u0001');
        const cases: [string[], NodeJS.ProcessEnv][] = [
          // '--x…', never a bare '--' (the end of the options, a valid command line).
          [['check', `--x${a}`], {}],
          [['check', '--interval', a], {}],
          [[`x${a}`], {}],
          [['check', '--timeout', '1'], { HYPIVISOR_WS: `ws://h/${a}#${a}` }],
          [['check', '--timeout', '1'], { XDG_CONFIG_HOME: config }],
        ];
        writeFileSync(join(config, 'ghostwatch', 'config.json'), JSON.stringify({ [s]: s }));
        const [args, env] = cases[which]!;
        const run = await gw(args, baseEnv(env));
        expect(run.code).toBe(2);
        expect(run.stderr.toString().split('\n').filter(Boolean)).toHaveLength(1);
        expectSafe(run, args.join(' '));
      }),
      { numRuns: 10 },
    );
  }, 120_000);

  it('a --registry with a #fragment is one clear line and exit 2 for every command, not a crash', async () => {
    for (const args of [['check'], ['reap', '--dry-run'], ['status'], ['watch'], []]) {
      const run = await gw([...args, '--registry', 'ws://ana:hunter2@127.0.0.1:9/ws#frag'], baseEnv());
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr.toString()).toBe(
        'ghostwatch: --registry has a #fragment, which a WebSocket URL cannot have: remove "#frag" from "ws://ana:***@127.0.0.1:9/ws#frag"\n',
      );
      expect(run.stdout.toString()).toBe('');
    }
  }, 60_000);
});
