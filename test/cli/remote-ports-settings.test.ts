// --probe-remote-ports: off by default, on by the flag or the config file's key, listed in --help.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { commandOptions, MONITOR_OPTIONS, monitorSettings } from '../../src/cli/settings.js';

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

function settings(argv: string[], file?: unknown) {
  dir = mkdtempSync(join(tmpdir(), 'gw-remote-ports-'));
  mkdirSync(join(dir, 'ghostwatch'));
  if (file !== undefined) writeFileSync(join(dir, 'ghostwatch/config.json'), JSON.stringify(file));
  const env = { XDG_CONFIG_HOME: dir, HYPIVISOR_WS: 'ws://127.0.0.1:9/ws' };
  const options = commandOptions(argv, MONITOR_OPTIONS, () => '', env);
  if (!options) throw new Error('help');
  return monitorSettings(options, env, dir);
}

describe('--probe-remote-ports in the settings', () => {
  it('is off unless asked, on by the flag or the config key', () => {
    expect(settings([]).probeRemotePorts).toBe(false);
    expect(settings(['--probe-remote-ports']).probeRemotePorts).toBe(true);
    expect(settings([], { 'probe-remote-ports': true }).probeRemotePorts).toBe(true);
    expect(settings([], { 'probe-remote-ports': false }).probeRemotePorts).toBe(false);
  });

  it('a wrong type in the file is one clear error', () => {
    expect(() => settings([], { 'probe-remote-ports': 'yes' })).toThrow(/"probe-remote-ports" must be true or false/);
  });

  it('is described where --help lists the monitor options', () => {
    const spec = MONITOR_OPTIONS.find((o) => o.name === 'probe-remote-ports');
    expect(spec).toMatchObject({ type: 'boolean' });
    expect(spec?.description).toMatch(/refused is a ghost/);
  });
});
