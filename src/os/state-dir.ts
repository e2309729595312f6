// Where ghostwatch keeps what it writes for the user: $XDG_STATE_HOME/ghostwatch, XDG_STATE_HOME
// defaulting to ~/.local/state (a relative one is ignored, per the XDG spec). The audit log and
// the trash of evicted session files live under it.
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

export function ghostwatchStateDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const xdg = env.XDG_STATE_HOME;
  const state = xdg !== undefined && xdg !== '' && isAbsolute(xdg) ? xdg : join(home, '.local', 'state');
  return join(state, 'ghostwatch');
}
