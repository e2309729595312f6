// What the real-agentctl tests drive: the real agentctl daemon (OrgLoop/agentctl), built once from
// its source into a fixed temp folder (it is on no package registry: GHOSTWATCH_REAL_AGENTCTL_SRC
// names a checkout, or a git directory whose HEAD is taken), run in a pid namespace of its own with
// a temp HOME. Never outside one: on start it SIGTERMs every process whose `ps aux` line holds
// "agentctl" and "daemon"; in its own namespace (its own /proc) it sees only itself.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from '../support/wait.js';
import { alive } from '../support/processes.js';

export const SOURCE_VAR = 'GHOSTWATCH_REAL_AGENTCTL_SRC';

function run(cmd: string, args: readonly string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 }, (error, _stdout, stderr) =>
      error ? reject(new Error(`${cmd} ${args.join(' ')} failed in ${cwd}: ${stderr || error.message}`)) : resolve(),
    );
  });
}

const isGitDir = (dir: string): boolean => existsSync(join(dir, 'HEAD')) && existsSync(join(dir, 'objects'));

/** Every file of a plain checkout but its builds, dependencies and history, for the cache key. */
function sourceDigest(dir: string): string {
  const hash = createHash('sha256');
  const walk = (at: string): void => {
    for (const name of readdirSync(at).sort()) {
      if (name === 'node_modules' || name === 'dist' || name === '.git') continue;
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else hash.update(path.slice(dir.length)).update(readFileSync(path));
    }
  };
  walk(dir);
  return hash.digest('hex').slice(0, 12);
}

/**
 * dist/cli.js of agentctl built from the source GHOSTWATCH_REAL_AGENTCTL_SRC names, into
 * os.tmpdir()/ghostwatch-real-agentctl-<commit or digest> (built in a side folder and renamed into
 * place, so a killed build never leaves a half one); reruns reuse it. Its dependencies come from npm.
 */
export async function buildAgentctl(): Promise<{ cli: string; version: string }> {
  const src = process.env[SOURCE_VAR];
  if (!src) {
    throw new Error(
      `${SOURCE_VAR} is not set: name a checkout of OrgLoop/agentctl (it is on no package registry), or a git directory of it (its HEAD is built)`,
    );
  }
  const git = isGitDir(src);
  const key = git ? execFileSync('git', ['--git-dir', src, 'rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8' }).trim() : sourceDigest(src);
  const dir = join(tmpdir(), `ghostwatch-real-agentctl-${key}`);
  const cli = join(dir, 'dist/cli.js');
  if (!existsSync(cli)) {
    const partial = `${dir}.partial-${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    if (git) execFileSync('sh', ['-c', 'git --git-dir "$1" archive HEAD | tar -x -C "$2"', 'sh', src, partial]);
    else cpSync(src, partial, { recursive: true, filter: (p) => !/[/\\](node_modules|dist|\.git)$/.test(p) });
    await run('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], partial);
    await run(join(partial, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], partial);
    rmSync(dir, { recursive: true, force: true });
    renameSync(partial, dir);
  }
  const version = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string }).version ?? '?';
  return { cli, version: `${version} (${key})` };
}

export interface RealDaemon {
  /** Its pid as this test sees it (in its own namespace it is pid 1). */
  readonly pid: number;
  readonly socketPath: string;
  readonly home: string;
  /** What it printed, stdout and stderr together. */
  readonly output: () => string;
  readonly alive: () => boolean;
  /** SIGCONT (a stopped one cannot die otherwise), then SIGKILL, and wait for its namespace to end. */
  readonly stop: () => Promise<void>;
}

/** `unshare --pid --fork --mount-proc agentctl daemon start --foreground` with HOME = `home`; resolves once it listens. */
export async function startDaemon(cli: string, home: string): Promise<RealDaemon> {
  const unshare: ChildProcess = spawn(
    'unshare',
    ['--pid', '--fork', '--mount-proc', '--kill-child', process.execPath, cli, 'daemon', 'start', '--foreground', '--metrics-port', '0'],
    { env: { ...process.env, HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  unshare.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  unshare.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const ended = new Promise<void>((resolve) => unshare.once('exit', () => resolve()));
  await until(() => out.includes('Socket:') || unshare.exitCode !== null, 20_000, () => `the daemon to listen: ${out}`);
  if (!out.includes('Socket:')) throw new Error(`the agentctl daemon did not start: ${out}`);
  const pid = Number(readFileSync(`/proc/${unshare.pid}/task/${unshare.pid}/children`, 'utf8').trim().split(' ')[0]);
  const isAlive = (): boolean => alive(pid) && !/\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  return {
    pid,
    socketPath: join(home, '.agentctl', 'agentctl.sock'),
    home,
    output: () => out,
    alive: () => {
      try {
        return isAlive();
      } catch {
        return false;
      }
    },
    stop: async () => {
      if (unshare.exitCode !== null || unshare.signalCode !== null) return;
      for (const signal of ['SIGCONT', 'SIGKILL'] as const) {
        try {
          process.kill(pid, signal);
        } catch {
          // gone already
        }
      }
      unshare.kill('SIGKILL');
      await ended;
    },
  };
}

/** One request on a fresh connection, its reply line. */
export function ask(socketPath: string, method: string, params: Record<string, unknown> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = createConnection(socketPath, () => c.write(`${JSON.stringify({ id: 'probe', method, params })}\n`));
    let got = '';
    c.setEncoding('utf8');
    c.on('data', (d: string) => {
      got += d;
      if (!got.includes('\n')) return;
      c.end();
      resolve(got.slice(0, got.indexOf('\n')));
    });
    c.on('error', reject);
  });
}
