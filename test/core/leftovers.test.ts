// Which processes a dead agent left behind, and which of them may ever be listed or signalled:
// core's pure rules, on facts given by hand (the engine and os tests run them on real processes).
import { describe, expect, it } from 'vitest';
import {
  identityKey,
  judgeLeftovers,
  learn,
  leftoverCell,
  MAX_REMEMBERED_PER_AGENT,
  neverTouch,
  sameProcess,
  signalPlan,
  type AgentMemory,
  type Leftover,
  type ProcessNow,
  type Self,
} from '../../src/core/leftovers.js';

const ME: Self = { uid: 1000, root: false, pids: new Set([500, 400]) };
const ROOT: Self = { uid: 0, root: true, pids: new Set([500]) };
const agent = { pid: 100, startTicks: 1000 };
const ref = { source: 'claude', id: 's1', cwd: '/w' };
const kid = (pid: number, startTicks = pid * 10, ppid = 100) => ({ pid, startTicks, ppid, name: `p${pid}` });
const now = (pid: number, over: Partial<ProcessNow> = {}): ProcessNow => ({ pid, ppid: 1, startTicks: pid * 10, state: 'S', name: `p${pid}`, cmd: `cmd ${pid}`, uid: 1000, ...over });

function judge(memory: AgentMemory[], read: Map<number, ProcessNow | null>, opts: { alive?: boolean | undefined; liveTrees?: string[]; self?: Self } = {}) {
  return judgeLeftovers({ memory, agentAlive: () => ('alive' in opts ? opts.alive : false), now: read, liveTrees: new Set(opts.liveTrees ?? []), self: opts.self ?? ME });
}

describe('sameProcess: the same pid and the same exact start', () => {
  it('ticks decide when both have them; ms only when neither has ticks; no start is never the same', () => {
    expect(sameProcess({ pid: 5, startTicks: 7 }, { pid: 5, startTicks: 7, startedAt: 1 })).toBe(true);
    expect(sameProcess({ pid: 5, startTicks: 7 }, { pid: 5, startTicks: 8 })).toBe(false);
    expect(sameProcess({ pid: 5, startTicks: 7 }, { pid: 6, startTicks: 7 })).toBe(false);
    expect(sameProcess({ pid: 5, startTicks: 7 }, { pid: 5, startedAt: 7 })).toBe(false);
    expect(sameProcess({ pid: 5, startedAt: 9 }, { pid: 5, startedAt: 9 })).toBe(true);
    expect(sameProcess({ pid: 5 }, { pid: 5 })).toBe(false);
    expect(identityKey({ pid: 5, startTicks: 7 })).toBe('5@7');
    expect(identityKey({ pid: 5, startedAt: 9 })).toBe('5@ms9');
  });
});

describe('learn: what an agent started, while it lives', () => {
  it('keeps what was learned before (a process reparented out of the tree is still the agent\'s), newest first, no pid 1', () => {
    const first = learn(undefined, agent, [ref], [kid(201), kid(202)]);
    const second = learn(first, agent, [{ source: 'claude', id: 's2' }], [kid(203), kid(201), { ...kid(1), pid: 1 }]);
    expect(second.descendants.map((d) => d.pid)).toEqual([203, 201, 202]);
    expect(second.refs.map((r) => r.id)).toEqual(['s2', 's1']);
  });

  it('remembers at most MAX_REMEMBERED_PER_AGENT per agent', () => {
    const many = Array.from({ length: MAX_REMEMBERED_PER_AGENT + 50 }, (_, i) => kid(1000 + i));
    expect(learn(undefined, agent, [ref], many).descendants).toHaveLength(MAX_REMEMBERED_PER_AGENT);
  });
});

describe('judgeLeftovers', () => {
  const memory = [learn(undefined, agent, [ref], [kid(201), kid(202), kid(203)])];

  it("a dead agent's processes still running as the same process are its leftovers; a dead one or a recycled pid is dropped", () => {
    const read = new Map<number, ProcessNow | null>([
      [201, now(201, { ports: [3000] })],
      [202, null],
      [203, now(203, { startTicks: 999_999 })], // pid 203 recycled: another process
    ]);
    const { groups, memory: kept } = judge(memory, read);
    expect(groups).toHaveLength(1);
    expect(groups[0]!.leftovers.map((l) => [l.pid, l.agentPid, l.otherUser])).toEqual([[201, 100, false]]);
    expect(groups[0]!.refs).toEqual([ref]);
    expect(kept[0]!.descendants.map((d) => d.pid)).toEqual([201]);
  });

  it('a zombie is gone (it only waits for its parent)', () => {
    const { groups, memory: kept } = judge(memory, new Map([[201, now(201, { state: 'Z' })], [202, null], [203, null]]));
    expect(groups).toEqual([]);
    expect(kept).toEqual([]);
  });

  it('a live agent has no leftovers, and keeps its memory; an agent not known yet lists nothing', () => {
    const read = new Map([[201, now(201)], [202, now(202)], [203, now(203)]]);
    expect(judge(memory, read, { alive: true })).toEqual({ groups: [], memory });
    expect(judge(memory, read, { alive: undefined }).groups).toEqual([]);
  });

  it('a process not read this round is kept and not listed', () => {
    const { groups, memory: kept } = judge(memory, new Map([[201, now(201)]]));
    expect(groups[0]!.leftovers.map((l) => l.pid)).toEqual([201]);
    expect(kept[0]!.descendants.map((d) => d.pid)).toEqual([201, 202, 203]);
  });

  it('a process in a live agent\'s tree, or learned by a live agent too, is never listed (but remembered)', () => {
    const live = learn(undefined, { pid: 300, startTicks: 5 }, [{ source: 'claude', id: 'live' }], [kid(202)]);
    const both = [...memory, live];
    const read = new Map([[201, now(201)], [202, now(202)], [203, now(203)]]);
    const { groups, memory: kept } = judgeLeftovers({
      memory: both,
      agentAlive: (a) => a.pid === 300,
      now: read,
      liveTrees: new Set([identityKey(kid(203))]),
      self: ME,
    });
    expect(groups[0]!.leftovers.map((l) => l.pid)).toEqual([201]);
    expect(kept.find((m) => m.agent.pid === 100)!.descendants.map((d) => d.pid)).toEqual([201, 202, 203]);
  });

  it("another user's process is listed only when ghostwatch runs as root, marked as such; an unreadable owner only as root", () => {
    const read = new Map([[201, now(201, { uid: 65534, user: 'nobody' })], [202, now(202, { uid: undefined })], [203, null]]);
    expect(judge(memory, read).groups).toEqual([]);
    const asRoot = judge(memory, read, { self: ROOT }).groups[0]!.leftovers;
    expect(asRoot.map((l) => [l.pid, l.otherUser])).toEqual([
      [201, true],
      [202, true],
    ]);
  });

  it('never ghostwatch itself or a process it runs under, never pid 1', () => {
    const m = [learn(undefined, agent, [ref], [kid(500), kid(400)])];
    expect(judge(m, new Map([[500, now(500)], [400, now(400)]])).groups).toEqual([]);
    expect(neverTouch({ pid: 1, uid: 0 }, ROOT)).toMatch(/init/);
    expect(neverTouch({ pid: 0, uid: 0 }, ROOT)).toMatch(/process group/);
    expect(neverTouch({ pid: -5, uid: 0 }, ROOT)).toMatch(/never signalled/);
    expect(neverTouch({ pid: 500, uid: 1000 }, ME)).toMatch(/ghostwatch itself/);
    expect(neverTouch({ pid: 777, uid: 1000 }, ME)).toBeUndefined();
  });
});

describe('signalPlan: the rules again, at the moment of signalling', () => {
  const left = (pid: number, over: Partial<Leftover> = {}): { leftover: Leftover } => ({ leftover: { ...now(pid), agentPid: 100, otherUser: false, ...over } });

  it('refuses pid 1, ghostwatch, another user unless root, a process with no start; each once', () => {
    const plan = signalPlan([left(1), left(500), left(201, { uid: 0 }), left(202, { startTicks: undefined }), left(203), left(203)], ME);
    expect(plan.send.map((t) => t.leftover.pid)).toEqual([203]);
    expect(plan.refused.map((r) => [r.target.leftover.pid, r.why])).toEqual([
      [1, expect.stringMatching(/init/)],
      [500, expect.stringMatching(/ghostwatch itself/)],
      [201, expect.stringMatching(/another user/)],
      [202, expect.stringMatching(/no start time/)],
    ]);
    expect(signalPlan([left(201, { uid: 0, otherUser: true })], ROOT).send).toHaveLength(1);
  });
});

describe('leftoverCell', () => {
  it('how many, and the lowest port any of them listens on', () => {
    const l = (ports: number[]): Leftover => ({ ...now(9), ports, agentPid: 1, otherUser: false });
    expect(leftoverCell(undefined)).toBe('-');
    expect(leftoverCell([])).toBe('-');
    expect(leftoverCell([l([])])).toBe('1');
    expect(leftoverCell([l([8080]), l([3000, 24678])])).toBe('2 :3000');
  });
});
