// --probe-remote-ports: off by default, on by the flag or the config file's key, listed in --help.
import { describe, expect, it } from 'vitest';
import { MONITOR_OPTIONS } from '../../src/cli/settings.js';
import { settingsFor as settings } from '../support/settings.js';

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
