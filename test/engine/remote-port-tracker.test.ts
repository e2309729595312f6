// The remote port tracker (--probe-remote-ports) on its own, on a hand-driven clock, with a
// checker that answers when the test says (no socket: what is tested is the tracker's cadence,
// rounds and folding, not the connect; test/os/remote-port-check.test.ts tests that). What the
// engine tests with real listeners cannot pin down: the cadence, a round asked for during a
// round, results that arrive after stop or for a target the view dropped, and when the table is
// told.
import { describe, expect, it } from 'vitest';
import type { RegistryView, RemotePortFacts, SessionEntry } from '../../src/core/types.js';
import { REMOTE_PORT_CADENCE_MS, RemotePortTracker } from '../../src/engine/remote-ports.js';
import type { RemoteCheckRunOptions, RemotePortCheck } from '../../src/os/remote-port-check.js';
import type { RemotePortTarget } from '../../src/core/remote-ports.js';
import { FakeClock, settle } from './fake-clock.js';

const HERE = 'this-box';
const isLocal = (m: string | undefined): boolean => m === undefined || m === HERE;

interface Call {
  readonly targets: readonly RemotePortTarget[];
  readonly opts: RemoteCheckRunOptions | undefined;
  answer(over?: Record<string, Partial<RemotePortFacts>>): void;
}

/** A checker whose every check waits for the test: `calls` in order, each answered by `answer()`. */
class HeldChecker implements RemotePortCheck {
  readonly calls: Call[] = [];
  /** What each `machine|port` answers by default. */
  results = new Map<string, Pick<RemotePortFacts, 'result' | 'detail'>>();
  /** Answer each check at once instead. */
  immediate = false;

  check(targets: readonly RemotePortTarget[], opts?: RemoteCheckRunOptions): Promise<ReadonlyMap<string, RemotePortFacts>> {
    return new Promise((resolve) => {
      const call: Call = {
        targets,
        opts,
        answer: (over = {}) => {
          const out = new Map<string, RemotePortFacts>();
          for (const t of targets) {
            const key = `${t.machine}|${t.port}`;
            const r = { ...(this.results.get(key) ?? { result: 'open' as const }), ...over[key] };
            out.set(key, { machine: t.machine, port: t.port, result: r.result!, detail: r.detail, checkedAt: opts?.now?.() ?? 0 });
          }
          resolve(out);
        },
      };
      this.calls.push(call);
      if (this.immediate) call.answer();
    });
  }

  keys(i: number): string[] {
    return this.calls[i]!.targets.map((t) => `${t.machine}|${t.port}`);
  }
}

const entry = (machine: string | undefined, port: number, more: Partial<SessionEntry> = {}): SessionEntry => ({ source: 'hypivisor', id: `${machine}:${port}`, machine, port, ...more });
const view = (...sessions: SessionEntry[]): RegistryView => ({ sessions, claims: [] });

function tracker(opts: { intervalScale?: number; sshVerified?: (m: string) => boolean } = {}) {
  const clock = new FakeClock();
  const checker = new HeldChecker();
  let changes = 0;
  const t = new RemotePortTracker({
    isLocal,
    checker,
    clock,
    now: () => clock.now(),
    intervalScale: opts.intervalScale ?? 1,
    onChange: () => changes++,
    ...(opts.sshVerified ? { sshVerified: opts.sshVerified } : {}),
  });
  return { t, clock, checker, changes: () => changes };
}

describe('RemotePortTracker', () => {
  it('checks every cadence (REMOTE_PORT_CADENCE_MS × intervalScale, never under a second), each timed round connecting again', async () => {
    for (const [scale, every] of [
      [1, REMOTE_PORT_CADENCE_MS],
      [2, 2 * REMOTE_PORT_CADENCE_MS],
      [0.25, REMOTE_PORT_CADENCE_MS / 4],
      [0.01, 1_000],
    ] as const) {
      const { t, clock, checker } = tracker({ intervalScale: scale });
      checker.immediate = true;
      t.setView(view(entry('build-1', 7000)));
      t.start();
      t.start(); // a second start arms nothing more
      expect(clock.intervals()).toEqual([every]);
      await settle();
      expect(checker.calls).toHaveLength(1);
      // Results may be reused only when younger than 90 % of a cadence: each timed round connects again.
      expect(checker.calls[0]!.opts).toMatchObject({ maxAgeMs: every * 0.9 });
      expect(checker.calls[0]!.opts!.signal).toBeInstanceOf(AbortSignal);
      expect(checker.calls[0]!.opts!.now!()).toBe(clock.now());
      await clock.advance(every - 1);
      expect(checker.calls).toHaveLength(1);
      await clock.advance(1);
      expect(checker.calls).toHaveLength(2);
      expect(t.rounds).toBe(2);
      await t.stop();
      expect(clock.armed).toBe(0);
      await clock.advance(10 * every);
      expect(checker.calls).toHaveLength(2);
    }
  });

  it('checks nothing without targets, nor machines of this host, ended entries or machines verified over ssh; by default no machine counts as ssh-verified', async () => {
    const { t, clock, checker } = tracker();
    checker.immediate = true;
    t.start();
    await clock.advance(3 * REMOTE_PORT_CADENCE_MS);
    expect(checker.calls).toHaveLength(0);
    expect(t.rounds).toBe(0);
    t.setView(view(entry(HERE, 7001), entry('build-1', 7002, { ended: true }), entry('build-2', 7003)));
    await settle();
    expect(checker.keys(0)).toEqual(['build-2|7003']);

    const verified = tracker({ sshVerified: (m) => m === 'build-2' });
    verified.checker.immediate = true;
    verified.t.setView(view(entry('build-2', 7003), entry('build-3', 7004)));
    verified.t.start();
    await settle();
    expect(verified.checker.keys(0)).toEqual(['build-3|7004']);
    await t.stop();
    await verified.t.stop();
  });

  it('a target added while running is checked at once; a view adding none, or one given before start, starts no round', async () => {
    const { t, checker } = tracker();
    checker.immediate = true;
    t.setView(view(entry('build-1', 7000)));
    await settle();
    expect(checker.calls).toHaveLength(0);
    t.start();
    await settle();
    expect(checker.calls).toHaveLength(1);
    t.setView(view(entry('build-1', 7000)));
    await settle();
    expect(checker.calls).toHaveLength(1);
    expect(t.firstDone).toBe(true);
    t.setView(view(entry('build-1', 7000), entry('build-2', 7001)));
    expect(t.firstDone).toBe(false);
    await settle();
    expect(checker.calls).toHaveLength(2);
    expect(checker.keys(1)).toEqual(['build-1|7000', 'build-2|7001']);
    expect(t.firstDone).toBe(true);
    // Dropping one starts no round either.
    t.setView(view(entry('build-2', 7001)));
    await settle();
    expect(checker.calls).toHaveLength(2);
    await t.stop();
  });

  it('a dropped target leaves the facts at once, and a result for it arriving later is not kept; the others stay', async () => {
    const { t, checker } = tracker();
    checker.immediate = true;
    t.setView(view(entry('build-1', 7000), entry('build-2', 7001)));
    t.start();
    await settle();
    expect([...t.facts.keys()]).toEqual(['build-1|7000', 'build-2|7001']);
    t.setView(view(entry('build-2', 7001)));
    expect([...t.facts.keys()]).toEqual(['build-2|7001']);
    // A round that started with both targets answers after one is dropped.
    checker.immediate = false;
    t.setView(view(entry('build-2', 7001), entry('build-3', 7002)));
    await settle();
    t.setView(view(entry('build-3', 7002)));
    checker.calls.at(-1)!.answer({ 'build-2|7001': { result: 'refused' } });
    await settle();
    expect([...t.facts.keys()]).toEqual(['build-3|7002']);
    // Fresh results of the eviction re-check for a target no longer watched: not kept either.
    t.apply(new Map([['build-1|7000', { machine: 'build-1', port: 7000, result: 'refused', checkedAt: 1 }]]));
    expect(t.facts.has('build-1|7000')).toBe(false);
    await t.stop();
  });

  it('tells the table only when a result changes (result or detail); an unchanged result keeps the old facts object', async () => {
    const { t, clock, checker, changes } = tracker();
    checker.immediate = true;
    t.setView(view(entry('build-1', 7000)));
    t.start();
    await settle();
    expect(changes()).toBe(1);
    const first = t.facts.get('build-1|7000');
    expect(first).toMatchObject({ result: 'open' });
    await clock.advance(REMOTE_PORT_CADENCE_MS);
    expect(t.rounds).toBe(2);
    expect(changes()).toBe(1);
    expect(t.facts.get('build-1|7000')).toBe(first);
    checker.results.set('build-1|7000', { result: 'error', detail: 'ETIMEDOUT' });
    await clock.advance(REMOTE_PORT_CADENCE_MS);
    expect(changes()).toBe(2);
    expect(t.facts.get('build-1|7000')).toMatchObject({ result: 'error', detail: 'ETIMEDOUT' });
    // Same result, another detail: news.
    checker.results.set('build-1|7000', { result: 'error', detail: 'EHOSTUNREACH' });
    await clock.advance(REMOTE_PORT_CADENCE_MS);
    expect(changes()).toBe(3);
    expect(t.facts.get('build-1|7000')).toMatchObject({ result: 'error', detail: 'EHOSTUNREACH' });
    await clock.advance(REMOTE_PORT_CADENCE_MS);
    expect(changes()).toBe(3);
    expect(t.rounds).toBe(5);
    await t.stop();
  });

  it('apply: fresh results are folded and told while running, ignored once stopped', async () => {
    const { t, checker, changes } = tracker();
    checker.immediate = true;
    t.setView(view(entry('build-1', 7000)));
    t.apply(new Map([['build-1|7000', { machine: 'build-1', port: 7000, result: 'refused', checkedAt: 1 }]]));
    expect(t.facts.size).toBe(0);
    t.start();
    await settle();
    expect(changes()).toBe(1);
    const refused: RemotePortFacts = { machine: 'build-1', port: 7000, result: 'refused', detail: 'ECONNREFUSED', checkedAt: 2 };
    t.apply(new Map([['build-1|7000', refused]]));
    expect(t.facts.get('build-1|7000')).toBe(refused);
    expect(changes()).toBe(2);
    t.apply(new Map([['build-1|7000', { ...refused, checkedAt: 3 }]]));
    expect(changes()).toBe(2);
    await t.stop();
    t.apply(new Map([['build-1|7000', { ...refused, result: 'open', detail: undefined }]]));
    expect(t.facts.get('build-1|7000')).toBe(refused);
    expect(changes()).toBe(2);
  });

  it('a round asked for while one runs runs once after it, not beside it', async () => {
    const { t, checker, changes } = tracker();
    t.setView(view(entry('build-1', 7000)));
    t.start();
    await settle();
    expect(checker.calls).toHaveLength(1);
    t.setView(view(entry('build-1', 7000), entry('build-2', 7001)));
    const refreshed = t.refresh();
    await settle();
    expect(checker.calls).toHaveLength(1);
    checker.calls[0]!.answer();
    await refreshed;
    await settle();
    expect(checker.calls).toHaveLength(2);
    expect(checker.keys(1)).toEqual(['build-1|7000', 'build-2|7001']);
    checker.calls[1]!.answer();
    await settle();
    expect(checker.calls).toHaveLength(2);
    expect(t.rounds).toBe(2);
    expect(changes()).toBe(2);
    await t.stop();
  });

  it('refresh (the R key) reuses only results younger than a second; after stop it checks nothing', async () => {
    const { t, checker } = tracker();
    checker.immediate = true;
    t.setView(view(entry('build-1', 7000)));
    t.start();
    await settle();
    await t.refresh();
    expect(checker.calls).toHaveLength(2);
    expect(checker.calls[1]!.opts).toMatchObject({ maxAgeMs: 1_000 });
    await t.stop();
    await t.refresh();
    expect(checker.calls).toHaveLength(2);
  });

  it('a round that answers after stop changes nothing and tells nobody; started again, it checks again', async () => {
    const { t, checker, changes } = tracker();
    t.setView(view(entry('build-1', 7000)));
    t.start();
    await settle();
    const stopped = t.stop();
    checker.calls[0]!.answer();
    await stopped;
    expect(t.facts.size).toBe(0);
    expect(t.rounds).toBe(0);
    expect(changes()).toBe(0);
    expect(t.firstDone).toBe(false);
    checker.immediate = true;
    t.start();
    await settle();
    expect(checker.calls).toHaveLength(2);
    expect(t.facts.get('build-1|7000')).toMatchObject({ result: 'open' });
    expect(changes()).toBe(1);
    await t.stop();
  });

  it('recheck connects fresh for exactly the entries that may be checked, and not at all when none may', async () => {
    const { t, checker } = tracker();
    checker.immediate = true;
    expect((await t.recheck([entry(HERE, 7000), entry('build-1', 0)])).size).toBe(0);
    expect(checker.calls).toHaveLength(0);
    const got = await t.recheck([entry(HERE, 7000), entry('build-2', 7001)]);
    expect(checker.calls).toHaveLength(1);
    expect(checker.calls[0]!.targets).toEqual([{ machine: 'build-2', port: 7001 }]);
    expect(checker.calls[0]!.opts).toMatchObject({ fresh: true });
    expect([...got.keys()]).toEqual(['build-2|7001']);
  });
});
