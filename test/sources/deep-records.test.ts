// A record nested 100,000 levels deep in agentctl's state or a Claude session file is capped as it
// is taken in, so nothing later (check --json, the detail view, the audit log) overflows the stack.
import { describe, expect, it } from 'vitest';
import { toClaimEntry, toSessionEntry } from '../../src/sources/agentctl/wire.js';
import { parseClaimSession, parseClaudeSession } from '../../src/sources/claude/formats.js';

const deep = (levels: number): unknown => {
  let v: unknown = 'bottom';
  for (let i = 0; i < levels; i++) v = [v];
  return v;
};
const depthOf = (v: unknown): number => (Array.isArray(v) ? 1 + Math.max(0, ...v.map(depthOf)) : v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0);
const ctx = { source: 'claude', host: 'devbox', firstSeen: () => 1, now: () => Date.now() };

describe('deeply nested records from files and daemons', () => {
  it('agentctl: a session record and a lock keep at most 33 levels, pid included', () => {
    const s = toSessionEntry({ id: 'a', pid: deep(100_000), meta: deep(100_000), status: 'running' }, 'agentctl', 'devbox', () => 1, Date.now())!;
    expect(() => JSON.stringify(s)).not.toThrow();
    expect(depthOf(s.raw)).toBeLessThanOrEqual(33);
    const c = toClaimEntry({ directory: '/w', type: 'auto', pid: deep(100_000), lockedAt: '2026-01-01T00:00:00Z' }, 'agentctl', 'devbox', new Set(), Date.now())!;
    expect(() => JSON.stringify(c)).not.toThrow();
  });

  it('Claude files: a session file and a claim file with deep fields', () => {
    const body = `{"pid": 4242, "sessionId": "s1", "cwd": "/w", "extra": ${'['.repeat(50_000)}${']'.repeat(50_000)}}`;
    const parsed = parseClaudeSession(body, '4242.json', ctx);
    const entries = 'error' in parsed ? [] : parsed.sessions;
    for (const e of entries) expect(() => JSON.stringify(e)).not.toThrow();
    const claim = `{"session_id": "c1", "pid": ${'['.repeat(50_000)}1${']'.repeat(50_000)}, "sd_id": 7, "heartbeat_at": "2026-01-01T00:00:00Z"}`;
    const out = parseClaimSession(claim, 'c1.json', { ...ctx, source: 'claude-sessions' });
    expect(() => JSON.stringify(out)).not.toThrow();
  });
});
