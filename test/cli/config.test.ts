// The config file another user could have written is not used: not by the settings resolution,
// and not by the built CLI (a real run with a planted file in a temp XDG_CONFIG_HOME). The
// defaults apply and one warning line names the file and why; our own file is still read.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandOptions, MONITOR_OPTIONS, monitorSettings } from '../../src/cli/settings.js';
import { runCli } from '../support/cli.js';
import { ownFile, PLANTINGS, plantingRequirement } from '../support/planted-files.js';
import { BUILT } from '../support/tmux.js';

const planting = plantingRequirement();
const withOtherUser = planting === undefined || process.env.CI === 'true' ? describe : describe.skip;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'gw-config-trust-'));
  chmodSync(dir, 0o755); // uid 65534 plants below it
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a planted file would turn on: a registry of its own choosing and another interval. */
const PLANTED = JSON.stringify({ source: ['agentctl'], 'agentctl-socket': '/planted/agentctl.sock', interval: 5 });

withOtherUser('a config file another user could have written', () => {
  let n = 0;
  const configHome = (): string => join(dir, `config-${++n}`);

  it.each(PLANTINGS)('config.json $how: not used, the defaults apply, one warning', ({ plant, why }) => {
    if (planting !== undefined) throw new Error(`CI=true and this test ${planting}`);
    const home = configHome();
    const path = plant(join(home, 'ghostwatch'), 'config.json', PLANTED);
    const warnings: string[] = [];
    const env = { XDG_CONFIG_HOME: home, HYPIVISOR_WS: 'ws://127.0.0.1:9/ws' };
    const options = commandOptions([], MONITOR_OPTIONS, () => '', env, (line) => warnings.push(line));
    const settings = monitorSettings(options!, env, dir);
    expect(settings.intervalScale).toBe(1);
    expect(settings.agentctlSocket).toBe(join(dir, '.agentctl', 'agentctl.sock'));
    expect(settings.discovery).toBeDefined(); // no registry named: the planted "source" is not one
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(new RegExp(`^the config file ${path} is not used: .*; defaults apply$`));
    expect(warnings[0]).toMatch(why);
    expect(options!.warnings).toEqual(warnings);
  });

  it('our own 0600 config.json in our 0700 folder is still used, with no warning', () => {
    const home = configHome();
    ownFile(join(home, 'ghostwatch'), 'config.json', PLANTED);
    const warnings: string[] = [];
    const env = { XDG_CONFIG_HOME: home, HYPIVISOR_WS: 'ws://127.0.0.1:9/ws' };
    const settings = monitorSettings(commandOptions([], MONITOR_OPTIONS, () => '', env, (line) => warnings.push(line))!, env, dir);
    expect([settings.intervalScale, settings.agentctlSocket, settings.kinds]).toEqual([20, '/planted/agentctl.sock', ['agentctl']]);
    expect(warnings).toEqual([]);
  });

  describe.runIf(BUILT || process.env.CI === 'true')('the built CLI', () => {
    const run = (home: string) =>
      runCli(['check', '--json', '--timeout', '3'], {
        PATH: process.env.PATH,
        HOME: join(dir, 'home'),
        XDG_CONFIG_HOME: home,
        XDG_STATE_HOME: join(dir, 'state'),
        HYPIVISOR_WS: 'ws://127.0.0.1:9/ws',
        NO_COLOR: '1',
      });

    it('`check` with a config.json of uid 65534: the planted registry is not read, one warning on stderr, exit 0', async () => {
      if (planting !== undefined) throw new Error(`CI=true and this test ${planting}`);
      const home = configHome();
      const path = PLANTINGS[0]!.plant(join(home, 'ghostwatch'), 'config.json', PLANTED);
      const r = await run(home);
      expect(r.stderr).toBe(`ghostwatch: warning: the config file ${path} is not used: it belongs to uid 65534, not to uid 0 (the user running ghostwatch); defaults apply\n`);
      expect(r.code).toBe(0);
      const report = JSON.parse(r.stdout) as { sources: { name: string; url?: string }[] };
      expect(JSON.stringify(report.sources)).not.toContain('/planted/');
    });

    it('`check` with our own config.json naming that registry: it is the one read, with no warning', async () => {
      const home = configHome();
      ownFile(join(home, 'ghostwatch'), 'config.json', PLANTED);
      const r = await run(home);
      expect(r.stderr).toBe('');
      const report = JSON.parse(r.stdout) as { sources: { name: string; url?: string }[] };
      expect(report.sources.map((s) => [s.name, s.url])).toEqual([['agentctl', '/planted/agentctl.sock']]);
    });
  });
});
