// --kill-grace (K, reap --leftovers: how long SIGTERM gets before SIGKILL): seconds from 0 to 600,
// by the flag or the config file's key; anything outside is one clear usage error that names
// where the value came from, never a grace silently clamped or a SIGKILL sent at once.
import { describe, expect, it } from 'vitest';
import { errorLines, UsageError } from '../../src/cli/args.js';
import { MONITOR_OPTIONS } from '../../src/cli/settings.js';
import { settingsFor as settings } from '../support/settings.js';

/** What settingsFor threw (it must throw). */
function thrown(argv: string[], file?: unknown): unknown {
  try {
    settings(argv, file);
  } catch (err) {
    return err;
  }
  throw new Error(`${JSON.stringify(argv)} ${JSON.stringify(file)} was accepted`);
}

describe('--kill-grace in the settings', () => {
  it('is the engine default (5 s) unless given; given, it is read in seconds, 0 and 600 included', () => {
    expect(settings([]).killGraceMs).toBeUndefined();
    expect(settings(['--kill-grace', '0']).killGraceMs).toBe(0);
    expect(settings(['--kill-grace', '2.5']).killGraceMs).toBe(2_500);
    expect(settings(['--kill-grace', '600']).killGraceMs).toBe(600_000);
    expect(settings([], { 'kill-grace': 30 }).killGraceMs).toBe(30_000);
    // The flag wins over the file.
    expect(settings(['--kill-grace', '1'], { 'kill-grace': 30 }).killGraceMs).toBe(1_000);
  });

  it.each([['600.001'], ['601'], ['86400'], ['1e9']])('--kill-grace %s (over 600) is a usage error, in one line', (value) => {
    const err = thrown(['--kill-grace', value]);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toBe('--kill-grace needs a number of seconds from 0 to 600');
    expect(errorLines(err)).toBe('ghostwatch: --kill-grace needs a number of seconds from 0 to 600\n');
    expect(thrown([`--kill-grace=${value}`])).toEqual(err);
  });

  it.each([[600.5], [601], [3600]])('"kill-grace": %d in the config file is a usage error that names the key and the file', (value) => {
    const err = thrown([], { 'kill-grace': value });
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/^"kill-grace" in \S+\/ghostwatch\/config\.json needs a number of seconds from 0 to 600$/);
  });

  it('a negative one is refused where it is read, flag or file', () => {
    for (const value of ['-1', '-0.001']) {
      const err = thrown([`--kill-grace=${value}`]);
      expect(err).toBeInstanceOf(UsageError);
      expect((err as Error).message).toBe(`--kill-grace needs a non-negative number, got "${value}"`);
    }
    const fromFile = thrown([], { 'kill-grace': -5 });
    expect(fromFile).toBeInstanceOf(UsageError);
    expect((fromFile as Error).message).toMatch(/\/ghostwatch\/config\.json: "kill-grace" must be a non-negative number \(got -5\)$/);
  });

  it('a value that is no number is refused before the range is looked at', () => {
    expect(thrown(['--kill-grace', 'soon'])).toBeInstanceOf(UsageError);
    expect(thrown([], { 'kill-grace': '5' })).toBeInstanceOf(UsageError);
  });

  it('is described where --help lists the monitor options, in seconds', () => {
    const spec = MONITOR_OPTIONS.find((o) => o.name === 'kill-grace');
    expect(spec).toMatchObject({ type: 'number', valueName: 'SECONDS' });
    expect(spec?.description).toMatch(/SIGTERM .* before SIGKILL \(default 5\)/);
  });
});
