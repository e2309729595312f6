// The edges of "is this registry machine this host?" (host.ts): what is normalized away, what
// counts as an address literal, and that a near-miss name is never this host.
import { describe, expect, it } from 'vitest';
import { matchHost } from '../../src/core/index.js';

describe('matchHost at its edges', () => {
  it.each([
    ['spaces around the machine name are ignored', '  devbox\t', 'devbox', [], 'exact'],
    ['spaces around the host name are ignored', 'devbox', ' DEVBOX ', [], 'exact'],
    ['every trailing dot is dropped, not just one', 'devbox..', 'devbox', [], 'exact'],
    ['an FQDN with trailing dots still matches the short name', 'DEVBOX.lan...', 'devbox', [], 'short-name'],
    ['an empty machine never matches an empty host name', '', '', [], undefined],
    ['a machine of only dots is empty', '..', '.', [], undefined],
    ['an empty alias matches nothing', '', 'devbox', [''], undefined],
    ['a name that starts with digits is still a name', '10host', '10host.lan', [], 'short-name'],
    ['an IP literal never matches a short name by its first octet', '10.0.0.5', '10x', ['10'], undefined],
    ['a name with a colon is an address, matched only exactly', 'devbox.lan:22', 'devbox', [], undefined],
    ['a host name with a colon, the same', 'devbox', 'devbox.lan:22', [], undefined],
    ['two short names must be equal: a prefix is another host', 'devbo', 'devbox', [], undefined],
    ['two short names must be equal: a longer name is another host', 'devbox', 'devbo', [], undefined],
    ['an alias that does not match is no match', 'laptop', 'devbox', ['builder'], undefined],
    ['the second alias can match', 'builder', 'devbox', ['ci', 'builder'], 'alias'],
    ['the host name wins over an alias', 'devbox', 'devbox', ['devbox'], 'exact'],
  ] as const)('%s: %j vs %j (aliases %j) → %s', (_name, machine, host, aliases, expected) => {
    expect(matchHost(machine, host, aliases)).toBe(expected);
  });
});
