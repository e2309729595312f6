// "Is this registry machine this host?" (host.ts): exact, short-name and alias matches; what is
// normalized away (case, spaces, trailing dots), what counts as an address literal (matched only
// exactly), and that a near-miss name is never this host.
import { describe, expect, it } from 'vitest';
import { matchHost } from '../../src/core/index.js';
import { firstHostMatching } from '../../src/core/host.js';

describe('matchHost', () => {
  it.each([
    ['devbox', 'devbox', [], 'exact'],
    ['DevBox', 'devbox', [], 'exact'],
    ['devbox.', 'devbox', [], 'exact'],
    ['devbox.corp.example.com', 'devbox', [], 'short-name'],
    ['devbox', 'devbox.corp.example.com', [], 'short-name'],
    ['devbox.a.com', 'devbox.b.com', [], undefined],
    ['devbox2', 'devbox', [], undefined],
    ['dev', 'devbox.example.com', [], undefined],
    ['10.0.0.5', '10', [], undefined],
    ['10.0.0.5', '10.0.0.5', [], 'exact'],
    ['::1', '::1', [], 'exact'],
    ['builder-7', 'devbox', ['builder-7'], 'alias'],
    ['builder-7.ci.example.com', 'devbox', ['BUILDER-7'], 'alias'],
    ['', 'devbox', [], undefined],
    [undefined, 'devbox', [], undefined],
    // An empty name is no host, even beside another empty one (a blank alias, a name of dots).
    ['', '', [], undefined],
    ['.', 'devbox', [' '], undefined],
  ] as const)('%s vs %s (aliases %j) → %s', (machine, host, aliases, expected) => {
    expect(matchHost(machine, host, aliases)).toBe(expected);
  });
});

describe('firstHostMatching', () => {
  // Names that differ in case, spaces, trailing dots, short and full forms, IP literals, and
  // duplicates: the index must find exactly what a scan with matchHost finds, the first of them.
  const hosts = ['devbox', 'DevBox.corp.example.com', 'devbox.other.com', ' builder-7. ', '10.0.0.5', '10.0.0.6', '::1', 'devbox', '.hidden', 'a..b'];
  const machines = ['devbox', 'DEVBOX.', 'devbox.corp.example.com', 'devbox.other.com', 'devbox.third.com', 'builder-7', 'BUILDER-7.ci.example.com', '10.0.0.5', '10', '10.0.0.6.', '::1', '::2', '.hidden', 'a..b', 'a', '', ' ', 'nowhere'];
  it.each(machines)('finds for %j what a scan finds', (machine) => {
    const find = firstHostMatching(hosts, (h) => h);
    const scan = hosts.findIndex((h) => matchHost(machine, h, []) !== undefined);
    const found = find(machine);
    expect(found === undefined ? -1 : hosts.indexOf(found)).toBe(scan);
  });

  it('returns the first matching host in their order, the item itself', () => {
    const items = [{ name: 'devbox.a.com' }, { name: 'devbox' }, { name: 'DEVBOX' }];
    const find = firstHostMatching(items, (i) => i.name);
    // A short name matches the full one first in the list.
    expect(find('devbox')).toBe(items[0]);
    expect(find('devbox.a.com')).toBe(items[0]);
    expect(find('devbox.b.com')).toBe(items[1]);
    expect(find('other')).toBeUndefined();
  });
});

describe('matchHost: normalization, address literals and near misses', () => {
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
