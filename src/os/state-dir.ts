// Where ghostwatch keeps what it writes for the user: $XDG_STATE_HOME/ghostwatch, XDG_STATE_HOME
// defaulting to ~/.local/state (a relative one is ignored, per the XDG spec). The audit log and
// the trash of evicted session files live under it.
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

export function ghostwatchStateDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  return join(xdgHome(env, 'XDG_STATE_HOME') ?? join(home, '.local', 'state'), 'ghostwatch');
}

/**
 * An XDG base directory the environment names (state, config): only an absolute one counts,
 * per the XDG spec; undefined means the caller's default under the home folder.
 */
export function xdgHome(env: NodeJS.ProcessEnv, variable: 'XDG_STATE_HOME' | 'XDG_CONFIG_HOME'): string | undefined {
  const dir = env[variable];
  return dir !== undefined && dir !== '' && isAbsolute(dir) ? dir : undefined;
}

