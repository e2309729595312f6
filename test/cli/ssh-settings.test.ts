// --ssh, --ssh-all and the config file's "hosts": resolved into the monitor's settings, with
// errors that name the flag or the config key.
import { describe, expect, it } from 'vitest';
import { settingsFor as settings } from '../support/settings.js';

describe('ssh hosts in the settings', () => {
  it('takes repeated --ssh MACHINE=DEST and --ssh-all', () => {
    const s = settings(['--ssh', 'build-42=me@build-42.internal', '--ssh', 'gpu=gpu-alias', '--ssh-all']);
    expect(s.sshHosts).toEqual([
      { machine: 'build-42', dest: 'me@build-42.internal' },
      { machine: 'gpu', dest: 'gpu-alias' },
    ]);
    expect(s.sshAll).toBe(true);
    expect(settings([]).sshHosts).toEqual([]);
  });

  it('reads "hosts" from the config file, a port as an ssh:// destination, and flags replace it', () => {
    const file = { hosts: { 'build-42': { ssh: 'me@build-42.internal', port: 2222 }, gpu: { ssh: 'gpu' } } };
    expect(settings([], file).sshHosts).toEqual([
      { machine: 'build-42', dest: 'ssh://me@build-42.internal:2222' },
      { machine: 'gpu', dest: 'gpu' },
    ]);
    expect(settings(['--ssh', 'a=b'], file).sshHosts).toEqual([{ machine: 'a', dest: 'b' }]);
  });

  it.each([
    [['--ssh', 'build-42'], undefined, /--ssh needs MACHINE=DEST/],
    [['--ssh', 'm=-oProxyCommand=x'], undefined, /--ssh: the destination of m may not start with "-"/],
    [['--ssh', 'm=a', '--ssh', 'M=b'], undefined, /--ssh: M is given twice/],
    [[], { hosts: ['x'] }, /"hosts" must be an object of machine names/],
    [[], { hosts: { b: { ssh: 'x', port: 70000 } } }, /"hosts.b.port" must be a port number from 1 to 65535 \(got 70000\)/],
    [[], { hosts: { b: { port: 22 } } }, /"hosts.b.ssh" must be an ssh destination/],
    [[], { hosts: { b: { ssh: 'x', user: 'me' } } }, /unknown key "hosts.b.user"/],
    [[], { ssh: 'b' }, /"ssh" in .*config.json needs MACHINE=DEST/],
    // A port makes the file's destination ssh://DEST:PORT: its host may not read as an option either.
    [[], { hosts: { b: { ssh: '-oProxyCommand=touch${IFS}/tmp/x', port: 22 } } }, /"ssh" in .*: the destination of b may not start with "-"/],
    [[], { hosts: { b: { ssh: 'me@-oProxyCommand=x' } } }, /the destination of b may not start with "-"/],
    [['--ssh', 'm=ssh://-oProxyCommand=x:22'], undefined, /--ssh: the destination of m may not start with "-"/],
    [['--ssh', 'm=me@host\nProxyCommand x'], undefined, /--ssh: the destination of m may not contain spaces or control characters/],
    [['--ssh', 'm=host\u001b]0;title\u0007'], undefined, /--ssh: the destination of m may not contain spaces or control characters/],
    [['--ssh', 'm=host\u202e'], undefined, /--ssh: the destination of m may not contain spaces or control characters/],
    [['--ssh', 'a b=host'], undefined, /--ssh: the machine "a b" may not contain spaces, control characters or "="/],
    [['--ssh', 'm\u001b[2J=host'], undefined, /--ssh: the machine "m\^\[\[2J" may not contain/],
    // A machine key with "=" would split into another machine and destination.
    [[], { hosts: { 'a=me@evil': { ssh: 'x' } } }, /"hosts" has a machine name that is empty or contains "=": "a=me@evil"/],
  ])('%j %j is refused', (argv, file, message) => {
    expect(() => settings(argv, file)).toThrow(message);
  });
});
