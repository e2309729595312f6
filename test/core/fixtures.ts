// Builders for core tests: entries, OS facts and a policy for a host called "devbox".
import {
  defaultPolicy,
  reconcile,
  type ClaimEntry,
  type Finding,
  type KillResult,
  type OsFacts,
  type PidFacts,
  type Policy,
  type PortFacts,
  type PortResult,
  type SessionEntry,
} from '../../src/core/index.js';

export const HOST = 'devbox';
export const NOW = 1_800_000_000_000;
export const POLICY: Policy = defaultPolicy(HOST);

export function session(id: string, fields: Partial<SessionEntry> = {}): SessionEntry {
  return { source: 'hypivisor', id, machine: HOST, status: 'active', ...fields };
}

export function claim(resource: string, fields: Partial<ClaimEntry> = {}): ClaimEntry {
  return { source: 'hypivisor', resource, ...fields };
}

export function alive(pid: number, fields: Partial<PidFacts> = {}): PidFacts {
  return { pid, kill: 'ok', state: 'S', startedAt: NOW - 3_600_000, checkedAt: NOW, ...fields };
}

export function gone(pid: number): PidFacts {
  return { pid, kill: 'ESRCH', checkedAt: NOW };
}

export function pidFacts(pid: number, kill: KillResult, fields: Partial<PidFacts> = {}): PidFacts {
  return { pid, kill, checkedAt: NOW, ...fields };
}

export function port(p: number, result: PortResult, detail?: string): PortFacts {
  return { port: p, result, checkedAt: NOW, ...(detail ? { detail } : {}) };
}

export function os(pids: PidFacts[] = [], ports: PortFacts[] = []): OsFacts {
  return { pids: new Map(pids.map((f) => [f.pid, f])), ports: new Map(ports.map((f) => [f.port, f])) };
}

export function run(
  sessions: SessionEntry[],
  facts: OsFacts = os(),
  opts: { claims?: ClaimEntry[]; policy?: Policy; now?: number } = {},
): Finding[] {
  return reconcile({ sessions, claims: opts.claims ?? [] }, facts, opts.now ?? NOW, opts.policy ?? POLICY);
}

export function one(findings: Finding[], id: string): Finding {
  const f = findings.find((x) => x.id === id);
  if (!f) throw new Error(`no finding for ${id}`);
  return f;
}
