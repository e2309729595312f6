// The monitor's settings as the CLI resolves them from argv and a config file: the file is
// written to a temp XDG_CONFIG_HOME (removed again before this returns), the registry pinned.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandOptions, MONITOR_OPTIONS, monitorSettings, type MonitorSettings } from '../../src/cli/settings.js';

/** `file`, when given, is written as ghostwatch/config.json (JSON.stringify'd). Throws what monitorSettings throws. */
export function settingsFor(argv: string[], file?: unknown): MonitorSettings {
  const dir = mkdtempSync(join(tmpdir(), 'gw-settings-'));
  try {
    mkdirSync(join(dir, 'ghostwatch'));
    if (file !== undefined) writeFileSync(join(dir, 'ghostwatch/config.json'), JSON.stringify(file));
    const env = { XDG_CONFIG_HOME: dir, HYPIVISOR_WS: 'ws://127.0.0.1:9/ws' };
    const options = commandOptions(argv, MONITOR_OPTIONS, () => '', env);
    if (!options) throw new Error('help');
    return monitorSettings(options, env, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
