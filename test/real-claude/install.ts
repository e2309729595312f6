// Where the real-Claude tests get Claude Code: `@anthropic-ai/claude-code` from npm (a native
// binary), one version (2.1.332 unless GHOSTWATCH_REAL_CLAUDE_VERSION says otherwise) installed once
// into a fixed temp folder, and what that version is known to write.
import { execFile } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync } from 'node:fs';
import { arch, platform, tmpdir } from 'node:os';
import { join } from 'node:path';

export const CLAUDE_VERSION = process.env.GHOSTWATCH_REAL_CLAUDE_VERSION ?? '2.1.332';
const PACKAGE = '@anthropic-ai/claude-code';
export const INSTALL_DIR = join(tmpdir(), `ghostwatch-real-claude-${CLAUDE_VERSION}`);

/** `a` is the same version as `b` or later (dotted numbers). */
export function versionAtLeast(a: string, b: string): boolean {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d > 0;
  }
  return true;
}

/** 2.1.332 writes pidDomain, the `<pid>.<sha256>.key` file and a messaging socket; 2.1.197 none of them. */
export const WRITES_PID_DOMAIN = versionAtLeast(CLAUDE_VERSION, '2.1.332');

/** The file starts with the ELF magic (the binary is 400 MB: only its first 4 bytes are read). */
function isElf(path: string): boolean {
  const head = Buffer.alloc(4);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    readSync(fd, head, 0, 4, 0);
    return head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * The native binary of an install: bin/claude.exe once the package's postinstall has copied the
 * platform binary over its placeholder, else the platform package's own binary (an npm that does
 * not run install scripts leaves the placeholder).
 */
function binaryIn(dir: string): string | undefined {
  const wrapper = join(dir, 'node_modules', PACKAGE, 'bin', 'claude.exe');
  if (isElf(wrapper)) return wrapper;
  const native = join(dir, 'node_modules', `${PACKAGE}-${platform()}-${arch()}`, 'claude');
  return isElf(native) ? native : undefined;
}

function installedVersion(dir: string): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(join(dir, 'node_modules', PACKAGE, 'package.json'), 'utf8')) as { version?: string };
    return binaryIn(dir) ? pkg.version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The Claude Code binary of CLAUDE_VERSION, installed from npm on first use into
 * os.tmpdir()/ghostwatch-real-claude-<version> (built in a side folder and renamed into place, so a
 * killed install never leaves a half cache); reruns reuse it. `--engine-strict=false`: 2.1.332
 * declares Node >= 22 but is a native binary that never runs on our Node; npm only warns.
 */
export async function installClaude(): Promise<string> {
  if (installedVersion(INSTALL_DIR) !== CLAUDE_VERSION) {
    const partial = `${INSTALL_DIR}.partial-${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    const args = ['install', '--prefix', partial, '--no-audit', '--no-fund', '--loglevel=error', '--engine-strict=false', `${PACKAGE}@${CLAUDE_VERSION}`];
    await new Promise<void>((resolve, reject) => {
      execFile('npm', args, { timeout: 600_000 }, (error, _stdout, stderr) =>
        error ? reject(new Error(`npm install ${PACKAGE}@${CLAUDE_VERSION} failed: ${stderr}`)) : resolve(),
      );
    });
    rmSync(INSTALL_DIR, { recursive: true, force: true });
    renameSync(partial, INSTALL_DIR);
    if (installedVersion(INSTALL_DIR) !== CLAUDE_VERSION) throw new Error(`${INSTALL_DIR} does not hold ${PACKAGE}@${CLAUDE_VERSION} after npm install`);
  }
  return binaryIn(INSTALL_DIR)!;
}
