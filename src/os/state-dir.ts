// Where ghostwatch keeps what it writes for the user: $XDG_STATE_HOME/ghostwatch, XDG_STATE_HOME
// defaulting to ~/.local/state (a relative one is ignored, per the XDG spec). The audit log and
// the trash of evicted session files live under it.
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

export function ghostwatchStateDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  return join(xdgHome(env, 'XDG_STATE_HOME') ?? join(home, '.local', 'state'), 'ghostwatch');
}

/**
 * An XDG base directory the environment names (state, cache, config): only an absolute one counts,
 * per the XDG spec; undefined means the caller's default under the home folder.
 */
export function xdgHome(env: NodeJS.ProcessEnv, variable: 'XDG_STATE_HOME' | 'XDG_CACHE_HOME' | 'XDG_CONFIG_HOME'): string | undefined {
  const dir = env[variable];
  return dir !== undefined && dir !== '' && isAbsolute(dir) ? dir : undefined;
}

/**
 * $XDG_CACHE_HOME/ghostwatch (default ~/.cache/ghostwatch), where the start-up caches live (the
 * code cache, the kept first frame); undefined when they are off (GHOSTWATCH_CODE_CACHE=0) or there
 * is no home.
 */
export function ghostwatchCacheDir(env: NodeJS.ProcessEnv, home: () => string): string | undefined {
  if (env.GHOSTWATCH_CODE_CACHE === '0') return undefined;
  const xdg = xdgHome(env, 'XDG_CACHE_HOME');
  if (xdg !== undefined) return join(xdg, 'ghostwatch');
  let h: string;
  try {
    h = home();
  } catch {
    return undefined;
  }
  return h === '' ? undefined : join(h, '.cache', 'ghostwatch');
}
