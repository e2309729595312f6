// The merged view and the policy of a moment: one source's lists used as they are, several in
// order (sessions of each, then claims of each); every registry's clock offset; the TTL only when
// given; moments named on the local clock as hh:mm:ss.
import { describe, expect, it } from 'vitest';
import { defaultPolicy, type ClaimEntry, type SessionEntry } from '../../src/core/types.js';
import { localClockText, mergeView, policyFor } from '../../src/engine/registry-view.js';
import type { SourceSnapshot } from '../../src/sources/types.js';
import { source } from '../support/ui-fixtures.js';

const snap = (name: string, sessions: string[], claims: string[] = [], clockOffsetMs = 0): SourceSnapshot => ({
  sessions: sessions.map((id): SessionEntry => ({ source: name, id })),
  claims: claims.map((resource): ClaimEntry => ({ source: name, resource })),
  state: source({ name, clockOffsetMs }),
});

describe('mergeView', () => {
  it("one source: its very lists", () => {
    const one = snap('a', ['s1'], ['/r']);
    const view = mergeView([one]);
    expect(view.sessions).toBe(one.sessions);
    expect(view.claims).toBe(one.claims);
  });

  it('several: the sessions of each in order, then the claims of each, the entries themselves', () => {
    const a = snap('a', ['a1', 'a2'], ['/ra']);
    const b = snap('b', ['b1'], ['/rb1', '/rb2']);
    const view = mergeView([a, b]);
    expect(view.sessions.map((s) => s.id)).toEqual(['a1', 'a2', 'b1']);
    expect(view.claims.map((c) => c.resource)).toEqual(['/ra', '/rb1', '/rb2']);
    expect(view.sessions[2]).toBe(b.sessions[0]);
    expect(mergeView([])).toEqual({ sessions: [], claims: [] });
  });
});

describe('policyFor', () => {
  it("every registry's clock offset, the aliases, and the default TTL when none is given", () => {
    const p = policyFor([snap('a', [], [], 1500), snap('b', [], [], -20)], 'devbox', ['devbox.lan'], undefined);
    expect(p.registryClockOffsetMs).toEqual({ a: 1500, b: -20 });
    expect(p.hostAliases).toEqual(['devbox.lan']);
    expect(p.pendingTtlMs).toBe(defaultPolicy('devbox').pendingTtlMs);
    expect(p.pendingTtlMs).toBeGreaterThan(0);
  });

  it('a given TTL wins', () => {
    expect(policyFor([], 'devbox', [], 5_000).pendingTtlMs).toBe(5_000);
  });
});

describe('localClockText', () => {
  it('hh:mm:ss with leading zeros below 10 and none from 10 on', () => {
    const at = (h: number, m: number, s: number) => new Date(2026, 0, 1, h, m, s).getTime();
    expect(localClockText(at(9, 5, 7))).toBe('09:05:07');
    expect(localClockText(at(10, 10, 10))).toBe('10:10:10');
    expect(localClockText(at(23, 59, 0))).toBe('23:59:00');
  });
});
