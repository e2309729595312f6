// The "not answering" probe: each live agent on this host that serves a WebSocket endpoint on its
// own port (hypivisor's agents) is sent one upgrade request per round, at the full probe's cadence,
// a few at a time; a port that did not answer within the bound, and how many rounds in a row it
// did not, are facts for core's answering rule. Only this host's loopback is ever connected to, and
// only a port the socket table says something listens on. A stopped or dead process is not asked
// (its own verdict says more); its facts are dropped.

import { isUsablePid, isUsablePort } from '../core/pid.js';
import type { IsLocalMachine } from '../core/probe-targets.js';
import { MISSES_NOTED } from '../core/rules/answering.js';
import type { HandshakeFacts, PidFacts, RegistryView } from '../core/types.js';
import { isStopped } from '../core/usage.js';
import { loopbackListeners, probeUpgrade, type UpgradeAnswer } from '../os/ws-handshake.js';
import type { Clock, TimerHandle } from '../plumbing/clock.js';
import { cadenceMs } from './os-facts.js';
import { isAlive } from './fact-merge.js';

/** How long an agent has to answer, at intervalScale 1: a blocked event loop that long is news. */
export const HANDSHAKE_BOUND_MS = 2_000;
/** Whatever the scale, never less: a loaded machine answers a loopback request in far less. */
export const HANDSHAKE_MIN_BOUND_MS = 500;
/** Requests in flight at once (a hung agent holds one for the whole bound). */
export const HANDSHAKE_CONCURRENCY = 8;
/**
 * Requests started per second at most, at intervalScale 1: a request costs the monitor ~0.4 ms of
 * CPU (bench costs), so this caps the probe near 1 % of a core whatever the number of agents; up
 * to 50 agents a round still fits in one cadence, above it a round takes longer.
 */
export const HANDSHAKE_RATE = 25;
/**
 * The socket table is read again after this long (at intervalScale 1), or at once when a port
 * not read yet is to be asked: reading /proc/net/tcp costs the kernel ~3.5 ms a table here (it walks
 * every socket), which once a round was most of what the probe added to an idle monitor.
 */
export const LISTENING_REFRESH_MS = 30_000;

/** How ports are asked: which of them something listens on (undefined: cannot tell, ask all), and the request. */
export interface UpgradeProbe {
  readonly listening: (ports: readonly number[]) => Promise<ReadonlySet<number> | undefined>;
  readonly ask: (port: number, boundMs: number, signal: AbortSignal) => Promise<UpgradeAnswer>;
}

/** This host: its socket table, and a real request on its loopback. */
export const LOOPBACK_UPGRADE_PROBE: UpgradeProbe = { listening: loopbackListeners, ask: probeUpgrade };

export interface HandshakeOptions {
  readonly isLocal: IsLocalMachine;
  /** What the OS last said of a pid (only a live, running one is asked). */
  readonly pidFacts: (pid: number) => PidFacts | undefined;
  readonly clock: Clock;
  readonly now: () => number;
  readonly intervalScale: number;
  readonly onChange: () => void;
  /** Default: this host's socket table and a real request on its loopback. */
  readonly probe?: UpgradeProbe | undefined;
}

/** The ports to ask, each with the pid that registered it: this host's active WebSocket agents. */
export function handshakeTargets(view: RegistryView, isLocal: IsLocalMachine): Map<number, number> {
  const out = new Map<number, number>();
  for (const s of view.sessions) {
    if (s.portProtocol !== 'websocket' || s.offline || s.pidDomain !== undefined) continue;
    if (!isUsablePort(s.port) || !isUsablePid(s.pid) || !isLocal(s.machine)) continue;
    out.set(s.port, s.pid);
  }
  return out;
}

export class HandshakeTracker {
  /** By port; handed to reconcile as is (only replaced into). */
  readonly facts = new Map<number, HandshakeFacts>();
  private targets = new Map<number, number>();
  private readonly boundMs: number;
  private readonly periodMs: number;
  /** Between two request starts, at least. */
  private readonly gapMs: number;
  private nextStart = -Infinity;
  private readonly listeningRefreshMs: number;
  /** The last read of which ports listen, when, and which ports it was read for. */
  private listening: { set: ReadonlySet<number> | undefined; at: number; ports: ReadonlySet<number> } = { set: undefined, at: -Infinity, ports: new Set() };
  private readonly probe: UpgradeProbe;
  private timer: TimerHandle | undefined;
  private started = false;
  private controller = new AbortController();
  private running: Promise<void> | undefined;
  rounds = 0;

  constructor(private readonly opts: HandshakeOptions) {
    this.boundMs = Math.max(HANDSHAKE_MIN_BOUND_MS, Math.round(HANDSHAKE_BOUND_MS * opts.intervalScale));
    this.periodMs = cadenceMs('full', opts.intervalScale);
    this.gapMs = (1000 / HANDSHAKE_RATE) * opts.intervalScale;
    this.listeningRefreshMs = LISTENING_REFRESH_MS * opts.intervalScale;
    this.probe = opts.probe ?? LOOPBACK_UPGRADE_PROBE;
  }

  /** Rounds run while started and some agent has a WebSocket port: no timer at all otherwise. */
  start(): void {
    if (this.started) return;
    this.started = true;
    if (this.controller.signal.aborted) this.controller = new AbortController();
    this.arm();
  }

  async stop(): Promise<void> {
    this.started = false;
    this.arm();
    this.controller.abort();
    await this.running;
  }

  /** The view changed: ports no longer an agent's are forgotten. */
  setView(view: RegistryView): void {
    this.targets = handshakeTargets(view, this.opts.isLocal);
    this.arm();
    let dropped = false;
    for (const port of this.facts.keys()) {
      if (this.targets.has(port)) continue;
      this.facts.delete(port);
      dropped = true;
    }
    if (dropped) this.opts.onChange();
  }

  /** The round timer runs exactly while started with targets. */
  private arm(): void {
    const wanted = this.started && this.targets.size > 0;
    if (wanted && this.timer === undefined) this.timer = this.opts.clock.setInterval(() => void this.round(), this.periodMs);
    else if (!wanted && this.timer !== undefined) {
      this.opts.clock.clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** One round: every live, running agent's port asked once, a few at a time. A round still running makes the tick a no-op. */
  round(): Promise<void> {
    if (this.running !== undefined || this.targets.size === 0) return this.running ?? Promise.resolve();
    const run = this.ask().finally(() => {
      this.running = undefined;
    });
    this.running = run;
    return run;
  }

  private async ask(): Promise<void> {
    const signal = this.controller.signal;
    const running: number[] = [];
    let changed = false;
    for (const [port, pid] of this.targets) {
      const f = this.opts.pidFacts(pid);
      if (f !== undefined && isAlive(f.kill) && !isStopped(f.state)) running.push(port);
      else if (this.facts.delete(port)) changed = true;
    }
    // Only what listens is asked: a port nothing serves has no hang to find (the port rule says the rest).
    const listening = running.length > 0 ? await this.listeningOf(running) : undefined;
    if (signal.aborted) return;
    const ports = listening === undefined ? running : running.filter((port) => listening.has(port));
    if (listening !== undefined) for (const port of running) if (!listening.has(port) && this.facts.delete(port)) changed = true;
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < ports.length && !signal.aborted) {
        const port = ports[next++]!;
        await this.pace(signal);
        if (signal.aborted) return;
        const answer = await this.probe.ask(port, this.boundMs, signal);
        if (signal.aborted || !this.targets.has(port)) return;
        if (this.fold(port, answer)) changed = true;
      }
    };
    await Promise.all(Array.from({ length: Math.min(HANDSHAKE_CONCURRENCY, ports.length) }, worker));
    if (signal.aborted) return;
    this.rounds++;
    if (changed) this.opts.onChange();
  }

  /** Which of `ports` listen: the last read while it is fresh and covers them all, else a new one. */
  private async listeningOf(ports: readonly number[]): Promise<ReadonlySet<number> | undefined> {
    const now = this.opts.clock.monotonic();
    const last = this.listening;
    if (now - last.at < this.listeningRefreshMs && ports.every((p) => last.ports.has(p))) return last.set;
    const set = await this.probe.listening(ports);
    this.listening = { set, at: now, ports: new Set(ports) };
    return set;
  }

  /** Waits until the next request may start (HANDSHAKE_RATE), and books that start; at once on abort. */
  private pace(signal: AbortSignal): Promise<void> {
    const now = this.opts.clock.monotonic();
    const at = Math.max(now, this.nextStart);
    this.nextStart = at + this.gapMs;
    if (at <= now || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.opts.clock.clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = this.opts.clock.setTimeout(done, at - now);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * One answer into the facts: only a port that did not answer is kept (an answer is the common
   * case, and 10,000 answering agents then cost nothing); a new object only when what the rule
   * reads changed (its timing alone is not news).
   */
  private fold(port: number, answer: UpgradeAnswer): boolean {
    const prev = this.facts.get(port);
    if (answer.result === 'answered') return this.facts.delete(port);
    const missed = answer.result === 'timeout' || answer.result === 'closed';
    const misses = missed ? (prev?.misses ?? 0) + 1 : 0;
    if (prev !== undefined && prev.result === answer.result && prev.detail === answer.detail && Math.min(prev.misses, MISSES_NOTED) === Math.min(misses, MISSES_NOTED)) return false;
    this.facts.set(port, { port, result: answer.result, detail: answer.detail, ms: answer.ms, boundMs: this.boundMs, misses, checkedAt: this.opts.now() });
    return true;
  }
}
