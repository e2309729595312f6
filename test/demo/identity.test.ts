import { describe, expect, it } from 'vitest';
import { demoCwd, demoId, REMOTE_MACHINE } from '../../src/demo/identity.js';
import { hostname } from 'node:os';
import { matchHost } from '../../src/core/host.js';

describe('demo identities', () => {
  it('gives every seed the same uuid-shaped id on every run', () => {
    expect(demoId('live:api-gateway')).toBe(demoId('live:api-gateway'));
    expect(demoId('live:api-gateway')).not.toBe(demoId('live:web-dashboard'));
    for (const seed of ['a', 'ghost:1', 'ghost:2', 'zombie:cli-tools']) {
      expect(demoId(seed)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });

  it('puts projects under ~/work', () => {
    expect(demoCwd('api-gateway')).toMatch(/\/work\/api-gateway$/);
  });

  it('names a remote host that can never match this one', () => {
    expect(matchHost(REMOTE_MACHINE, hostname(), [])).toBeUndefined();
  });
});
