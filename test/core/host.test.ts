import { describe, expect, it } from 'vitest';
import { matchHost } from '../../src/core/index.js';

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
  ] as const)('%s vs %s (aliases %j) → %s', (machine, host, aliases, expected) => {
    expect(matchHost(machine, host, aliases)).toBe(expected);
  });
});
