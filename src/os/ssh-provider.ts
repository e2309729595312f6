// A probe provider per remote host: one long-lived system `ssh` running the POSIX probe loop
// (remote-probe.ts) with stdin as our pipe, so it can never prompt for a password. Requests are
// pipelined and answered in order; each has a timeout. A host is `connecting`, `up` or `down`
// (with a one-line reason taken from ssh's stderr and exit code) and comes back through the
// shared backoff. The name the remote reports must be the machine the registry names: a
// mismatch keeps the host down, so its entries stay unverified, never judged. A host pushing
// more than its budget (push-budget.ts) is down too, as `flood`, while it does: its pushed lines
// are dropped unread (one character looked at each), and once a second's budget is spent its
// stdout is not read until the next second (reading a pipe in small chunks costs a core by itself;
// held, the remote's writes wait); when it has calmed down it is up again.
// How ssh is run and why it ended: ssh-command.ts; the hosts together: ssh-fleet.ts; answers as
// facts: remote-facts.ts; the remote side: remote-probe.ts.
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { matchHost } from '../core/host.js';
import { sanitize } from '../core/sanitize.js';
import type { PidFacts, PortFacts } from '../core/types.js';
import { isUsablePid, isUsablePort } from '../core/pid.js';
import { Backoff, type BackoffOptions } from '../plumbing/backoff.js';
import { realClock, type Clock } from '../plumbing/clock.js';
import { LineSplitter, ReplyFifo } from '../plumbing/line-channel.js';
import { PushBudget } from './push-budget.js';
import { childProcess } from './builtins.js';
import { throwIfAborted } from './liveness.js';
import type { ProcessTableResult } from './process-table.js';
import type { PidProbeOptions, PortProbeRunOptions, ProbeProvider } from './provider.js';
import { MAX_ANSWER_LENGTH, MAX_BATCH, parseAnswer, parseHandshake, parsePush, type Handshake, type RemoteAnswer } from './remote-probe.js';
import { chunks, killFacts, pidFacts, portFacts, type AnswerReading } from './remote-facts.js';
import { classifySshExit, sshArgs, type SshDownKind, type SshHostConfig, type SshHostStatus, type SshState } from './ssh-command.js';

/** The clocks and timers a host uses: the engine's Clock, or the process's own. */
export type SshClock = Pick<Clock, 'now' | 'monotonic' | 'setTimeout' | 'clearTimeout'>;

export interface SshOptions {
  /** The ssh client to run; `ssh` from PATH by default. */
  readonly sshCommand?: string | undefined;
  readonly clock?: SshClock | undefined;
  /** One answer's deadline; past it the connection is called stuck and dropped. */
  readonly requestTimeoutMs?: number | undefined;
  /** From spawning ssh to the handshake line (ssh's own ConnectTimeout is 5 s). */
  readonly connectTimeoutMs?: number | undefined;
  readonly backoff?: BackoffOptions | undefined;
  /** Told on every state change. */
  readonly onChange?: ((status: SshHostStatus) => void) | undefined;
  /** Other names of the machines (aliases), as for the local host. */
  readonly aliases?: readonly string[] | undefined;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 5_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_SSH_BACKOFF = { initialMs: 1_000, maxMs: 30_000 } as const;
/** Clocks within this of each other are taken as equal: the remote says its time in whole seconds. */
const CLOCK_SLACK_MS = 2_000;
const MAX_STDERR = 4_096;
/** '+': the first character of a line a watcher pushed. */
const PUSH_MARK = 0x2b;

interface Pending {
  /** The answer lines awaited, in order: `P 42`, `L 8080`, `K 3` (three letters), `H`. */
  readonly expect: readonly string[];
  readonly answers: RemoteAnswer[];
  readonly sentAt: number;
  readonly resolve: (answers: readonly RemoteAnswer[] | undefined) => void;
}

/** Facts pushed by the remote's watchers in one chunk read. */
interface Pushed {
  readonly pids: Map<number, PidFacts>;
  readonly ports: Map<number, PortFacts>;
}

/** One remote host: its connection, its state, and the probe provider the engine asks. */
export class SshHost implements ProbeProvider {
  readonly host: string;
  private readonly sshCommand: string;
  private readonly clock: SshClock;
  private readonly requestTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly backoff: Backoff;
  private readonly aliases: readonly string[];
  private child: ChildProcessWithoutNullStreams | undefined;
  private handshake: Handshake | undefined;
  private offsetMs = 0;
  private readonly pending: ReplyFifo<Pending>;
  private readonly lines = new LineSplitter(MAX_ANSWER_LENGTH);
  private stderr = '';
  private timer: unknown;
  private stopped = true;
  private status: SshHostStatus;
  /** Connections made so far (the bench and the tests count them). */
  connections = 0;
  /** Bytes of requests written to the remote. */
  bytesSent = 0;
  /** Lines the remote's watchers pushed and were read (the bench counts them). */
  linesPushed = 0;
  /** Pushed lines dropped unread while the host was flooding. */
  linesDropped = 0;
  private readonly budget = new PushBudget();
  /** Past its push budget, not calmed down yet: down as `flood`, its pushes dropped. */
  private flooding = false;
  /** While flooding: the end of the budget's second (its stdout is read again, and it may have calmed down). */
  private calmTimer: unknown;
  /** The remote answered under the machine's name on this connection: it is up when not flooding. */
  private named = false;
  /**
   * Told the facts the remote's watchers pushed (changes since their last reading, and each
   * watcher's first full reading), once per chunk read: see watch().
   */
  onPush: ((pids: ReadonlyMap<number, PidFacts>, ports: ReadonlyMap<number, PortFacts>) => void) | undefined;
  /** Pushed facts of the chunk being read. */
  private pushed: Pushed | undefined;

  constructor(
    readonly config: SshHostConfig,
    private readonly options: SshOptions = {},
    /** Waits for a connecting slot (the fleet's cap); resolves with a release function. */
    private readonly slot: () => Promise<() => void> = () => Promise.resolve(() => undefined),
  ) {
    this.host = config.machine;
    this.sshCommand = options.sshCommand ?? 'ssh';
    this.clock = options.clock ?? realClock;
    this.pending = new ReplyFifo(this.clock);
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.backoff = new Backoff({ ...DEFAULT_SSH_BACKOFF, ...options.backoff });
    this.aliases = options.aliases ?? [];
    // Not tried yet: about to connect (issue 27: a first frame said "ssh: 3 down" before any host was tried).
    this.status = { machine: config.machine, dest: config.dest, state: 'connecting' };
  }

  /** The running ssh client's pid, if any. */
  get sshPid(): number | undefined {
    return this.child?.pid;
  }

  get state(): SshHostStatus {
    return this.status;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.connect();
  }

  /** Close the connection (the remote loop ends with its stdin) and arm nothing more. */
  stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    const child = this.child;
    // (A held stdout is read again: the child is closed only once it has been read to its end.)
    this.endFlood(child);
    this.failPending();
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      child.once('close', () => resolve());
      child.stdin.end('Q\n');
      child.kill('SIGTERM');
    });
  }

  private setStatus(next: Partial<SshHostStatus> & { state: SshState }): void {
    this.status = { machine: this.config.machine, dest: this.config.dest, rttMs: this.status.rttMs, remoteName: this.status.remoteName, ...next };
    this.options.onChange?.(this.status);
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async connect(): Promise<void> {
    this.setStatus({ state: 'connecting' });
    const release = await this.slot();
    if (this.stopped) {
      release();
      return;
    }
    this.connections++;
    this.handshake = undefined;
    this.named = false;
    this.budget.reset(this.clock.monotonic());
    this.lines.clear();
    this.stderr = '';
    let released = false;
    const releaseOnce = (): void => {
      if (!released) release();
      released = true;
    };
    const child = childProcess().spawn(this.sshCommand, sshArgs(this.config), { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdin.on('error', () => undefined);
    child.stdout.on('data', (chunk: string) => this.onData(child, chunk, releaseOnce));
    child.stderr.on('data', (chunk: string) => {
      if (this.stderr.length < MAX_STDERR) this.stderr += chunk.slice(0, MAX_STDERR - this.stderr.length);
    });
    child.on('error', (err) => this.drop(child, 'error', `cannot run ${this.sshCommand}: ${sanitize(err.message, 160)}`));
    child.on('close', (code, signal) => {
      releaseOnce();
      if (this.child !== child) return;
      const { kind, reason } = classifySshExit(this.stderr, code, signal, this.status.state === 'up' || this.flooding);
      this.drop(child, kind, reason);
    });
    this.timer = this.clock.setTimeout(() => {
      releaseOnce();
      this.drop(child, 'timeout', `no answer within ${Math.round(this.connectTimeoutMs / 1000)} s of connecting`);
    }, this.connectTimeoutMs);
  }

  /** The connection is over: everything waiting gets no answer, and a reconnect is armed. */
  private drop(child: ChildProcessWithoutNullStreams, kind: SshDownKind, reason: string): void {
    if (this.child !== child) return;
    this.child = undefined;
    this.handshake = undefined;
    this.clearTimer();
    this.endFlood(child);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    this.failPending();
    if (this.stopped) {
      this.setStatus({ state: 'down', kind: 'error', reason: 'stopped' });
      return;
    }
    this.setStatus({ state: 'down', kind, reason });
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      void this.connect();
    }, this.backoff.next());
  }

  private failPending(): void {
    for (const p of this.pending.drain()) p.resolve(undefined);
  }

  private onData(child: ChildProcessWithoutNullStreams, chunk: string, release: () => void): void {
    if (this.child !== child) return;
    this.pushed = undefined;
    if (this.budget.roll(this.clock.monotonic())) this.calmed();
    const fits = this.lines.pushBounds(chunk, (text, from, to) => {
      const hs = this.handshake;
      if (hs !== undefined && text.charCodeAt(from) === PUSH_MARK) {
        if (this.budget.take(to - from)) this.onPushLine(child, text.slice(from, to), hs);
        else this.dropPushed(child);
      } else this.onLine(child, text.slice(from, to), release);
      return this.child === child;
    });
    if (this.child !== child) return;
    if (!fits) {
      this.drop(child, 'protocol', 'the remote sent a line longer than any answer');
      return;
    }
    // Flooding and this second's budget spent: nothing more is read of it this second.
    if (this.flooding && this.budget.spent) child.stdout.pause();
    // (onLine fills it: read it through a wider type than the assignment above narrowed it to.)
    const pushed = this.pushed as Pushed | undefined;
    this.pushed = undefined;
    if (pushed !== undefined) this.onPush?.(pushed.pids, pushed.ports);
  }

  /** A pushed line past the budget: counted, never read. The first one makes the host down as flooding. */
  private dropPushed(child: ChildProcessWithoutNullStreams): void {
    this.linesDropped++;
    if (this.flooding) return;
    this.flooding = true;
    this.setStatus({ state: 'down', kind: 'flood', reason: `sends more than ${this.budget.exceeded()}; ignored until it calms down` });
    this.atSecondEnd(child);
  }

  /** At the end of each second while flooding: read its stdout again; up again once it has calmed down. */
  private atSecondEnd(child: ChildProcessWithoutNullStreams): void {
    this.calmTimer = this.clock.setTimeout(() => {
      this.calmTimer = undefined;
      child.stdout.resume();
      if (this.budget.roll(this.clock.monotonic())) this.calmed();
      else this.atSecondEnd(child);
    }, this.budget.msLeft(this.clock.monotonic()));
  }

  /** Within its budget for a while: read again, up (or still connecting, if it has not said its name yet). */
  private calmed(): void {
    if (!this.flooding) return;
    this.endFlood(this.child);
    this.setStatus(this.named ? { state: 'up' } : { state: 'connecting' });
  }

  /** Not flooding (any more): the second's timer disarmed, and `child`'s stdout read again if it was held. */
  private endFlood(child: ChildProcessWithoutNullStreams | undefined): void {
    this.flooding = false;
    if (this.calmTimer !== undefined) this.clock.clearTimeout(this.calmTimer);
    this.calmTimer = undefined;
    child?.stdout.resume();
  }

  /** A line a watcher pushed: its facts join the chunk's; anything but a P or L shape ends the connection. */
  private onPushLine(child: ChildProcessWithoutNullStreams, line: string, hs: Handshake): void {
    const answer = parsePush(line, hs);
    const checkedAt = this.clock.now();
    this.linesPushed++;
    const pushed = (this.pushed ??= { pids: new Map(), ports: new Map() });
    if (answer.kind === 'pid') pushed.pids.set(answer.pid, pidFacts(answer.pid, answer, checkedAt, this.reading()));
    else if (answer.kind === 'port') pushed.ports.set(answer.port, portFacts(answer.port, answer, checkedAt, this.reading()));
    else this.drop(child, 'protocol', `a pushed line of no known shape: ${answer.kind === 'invalid' ? answer.text : sanitize(line, 80)}`);
  }

  private onLine(child: ChildProcessWithoutNullStreams, line: string, release: () => void): void {
    if (this.handshake === undefined) {
      const hs = parseHandshake(line);
      if (!hs) {
        this.drop(child, 'protocol', `not a ghostwatch probe: ${sanitize(line, 80)}`);
        return;
      }
      this.handshake = hs;
      const offset = this.clock.now() - hs.remoteNowSec * 1000;
      this.offsetMs = Math.abs(offset) < CLOCK_SLACK_MS ? 0 : offset;
      void this.request('H', ['H']).then((answers) => {
        const answer = answers?.[0];
        release();
        if (this.child !== child) return;
        if (answer?.kind !== 'host') {
          this.drop(child, 'protocol', answer === undefined ? 'no host name' : `bad host name answer${answer.kind === 'invalid' ? `: ${answer.text}` : ''}`);
          return;
        }
        this.clearTimer();
        const remoteName = sanitize(answer.name, 80);
        if (matchHost(this.config.machine, answer.name, this.aliases) === undefined) {
          this.status = { ...this.status, remoteName };
          this.drop(child, 'mismatch', `answers as "${remoteName}", not "${sanitize(this.config.machine, 80)}"`);
          return;
        }
        this.backoff.reset();
        this.named = true;
        // A host flooding already stays down until it calms down (then it is up, under this name).
        if (this.flooding) this.status = { ...this.status, remoteName };
        else this.setStatus({ state: 'up', remoteName });
      });
      return;
    }
    const head = this.pending.head;
    if (!head) {
      this.drop(child, 'protocol', `an answer nobody asked for: ${sanitize(line, 80)}`);
      return;
    }
    const answer = parseAnswer(line, this.handshake);
    const expect = head.expect[head.answers.length];
    const matches =
      (answer.kind === 'refused' && head.answers.length === 0) ||
      (answer.kind === 'pid' && expect === `P ${answer.pid}`) ||
      (answer.kind === 'port' && expect === `L ${answer.port}`) ||
      (answer.kind === 'kills' && expect === `K ${answer.results.length}`) ||
      (answer.kind === 'host' && expect === 'H') ||
      (answer.kind === 'watch' && expect === answer.verb);
    if (!matches) {
      this.pending.shift();
      head.resolve(undefined);
      this.drop(child, 'protocol', `answer out of order: ${answer.kind === 'invalid' ? answer.text : sanitize(line, 80)}`);
      return;
    }
    // A refused request is answered by one line, whatever it asked.
    if (answer.kind === 'refused') head.answers.push(...head.expect.map(() => answer));
    else head.answers.push(answer);
    if (head.answers.length < head.expect.length) return;
    this.pending.shift();
    this.status = { ...this.status, rttMs: this.clock.monotonic() - head.sentAt };
    head.resolve(head.answers);
  }

  /** Send one request line; its answer lines (as `expect` says), or undefined when the connection is not up or ended first. */
  private request(line: string, expect: readonly string[]): Promise<readonly RemoteAnswer[] | undefined> {
    const child = this.child;
    if (!child || this.handshake === undefined) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const entry: Pending = { expect, answers: [], sentAt: this.clock.monotonic(), resolve };
      this.pending.push(entry, this.requestTimeoutMs, () => {
        this.drop(child, 'timeout', `no answer within ${Math.round(this.requestTimeoutMs / 1000)} s`);
      });
      const text = `${line}\n`;
      this.bytesSent += Buffer.byteLength(text);
      child.stdin.write(text);
    });
  }

  /** Why a request's answer gave no facts: none came (what entries of a host that cannot answer are told), or not of the shape asked. */
  private noFacts(answer: RemoteAnswer | undefined): string {
    if (answer !== undefined) return `ssh ${this.host}: unreadable answer`;
    const s = this.status;
    return s.state === 'down' ? `ssh ${this.host} down: ${s.reason ?? 'unknown'}` : `ssh ${this.host} ${s.state}`;
  }

  /** What answers are read with: this host's name, its clock's offset, and why none came. */
  private reading(): AnswerReading {
    return { host: this.host, offsetMs: this.offsetMs, noFacts: (a) => this.noFacts(a) };
  }

  /** "via ssh build-42 (rtt 12 ms)": the evidence a verified remote fact carries. */
  via(): string {
    const rtt = this.status.rttMs;
    return `via ssh ${sanitize(this.host, 80)}${rtt === undefined ? '' : ` (rtt ${Math.round(rtt)} ms)`}`;
  }

  async probePids(pids: readonly number[], opts: PidProbeOptions): Promise<ReadonlyMap<number, PidFacts>> {
    const now = opts.now ?? (() => this.clock.now());
    const usable = [...new Set(pids.filter(isUsablePid))];
    if (!opts.full) return this.probeKills(usable, opts, now);
    const answers = await this.batched(usable, 'P');
    throwIfAborted(opts.signal);
    const out = new Map<number, PidFacts>();
    usable.forEach((pid, i) => out.set(pid, pidFacts(pid, answers[i], now(), this.reading())));
    return out;
  }

  /**
   * Have the remote watch these pids and ports on its own: every watcher it had is stopped (a bare
   * `W`), then one is started per MAX_BATCH pids (`W …`) and per MAX_BATCH ports (`V …`). Each
   * pushes its first full reading, then a line only when what reconcile can see changes (kill -0
   * every 0.5 s, state and start time every 4 s, listeners every 2 s; never CPU time or memory
   * alone: what a process costs is read by the full probes), so an idle host sends
   * nothing. True when every request was accepted; false when the host is not up (arm again when it is).
   */
  async watch(pids: readonly number[], ports: readonly number[]): Promise<boolean> {
    if (this.status.state !== 'up') return false;
    const usablePids = [...new Set(pids.filter(isUsablePid))];
    const usablePorts = [...new Set(ports.filter(isUsablePort))];
    const requests: [string, 'W' | 'V'][] = [
      ['W', 'W'],
      ...chunks(usablePids, MAX_BATCH).map((part): [string, 'W'] => [`W ${part.join(' ')}`, 'W']),
      ...chunks(usablePorts, MAX_BATCH).map((part): [string, 'V'] => [`V ${part.join(' ')}`, 'V']),
    ];
    // Each watcher pushes its first reading (a line per target) and then changes: its budget grows with them.
    this.budget.watch(usablePids.length + usablePorts.length);
    const answers = await Promise.all(requests.map(([line, verb]) => this.request(line, [verb])));
    return answers.every((a) => a?.[0]?.kind === 'watch');
  }

  /** One request line per MAX_BATCH pids or ports, one answer line each; undefined for each one not answered. */
  private async batched(items: readonly number[], verb: 'P' | 'L'): Promise<(RemoteAnswer | undefined)[]> {
    if (this.status.state !== 'up') return items.map(() => undefined);
    const parts = chunks(items, MAX_BATCH);
    const answers = await Promise.all(parts.map((part) => this.request(`${verb} ${part.join(' ')}`, part.map((n) => `${verb} ${n}`))));
    return parts.flatMap((part, i): (RemoteAnswer | undefined)[] => (answers[i] === undefined ? part.map(() => undefined) : [...answers[i]!]));
  }

  /** The fast tick: kill -0 only, one K line per MAX_BATCH pids and one short answer line each. */
  private async probeKills(pids: readonly number[], opts: PidProbeOptions, now: () => number): Promise<ReadonlyMap<number, PidFacts>> {
    const parts = chunks(pids, MAX_BATCH);
    const up = this.status.state === 'up';
    const answers = await Promise.all(parts.map((part) => (up ? this.request(`K ${part.join(' ')}`, [`K ${part.length}`]) : Promise.resolve(undefined))));
    throwIfAborted(opts.signal);
    const out = new Map<number, PidFacts>();
    parts.forEach((part, i) => {
      const a = answers[i]?.[0];
      const checkedAt = now();
      part.forEach((pid, j) => out.set(pid, killFacts(pid, a, j, checkedAt, this.reading())));
    });
    return out;
  }

  stillRunning(): boolean {
    return false;
  }

  async probePortFacts(ports: readonly number[], opts: PortProbeRunOptions): Promise<ReadonlyMap<number, PortFacts>> {
    const now = opts.now ?? (() => this.clock.now());
    const usable = [...new Set(ports.filter(isUsablePort))];
    const answers = await this.batched(usable, 'L');
    throwIfAborted(opts.signal);
    const out = new Map<number, PortFacts>();
    usable.forEach((port, i) => out.set(port, portFacts(port, answers[i], now(), this.reading())));
    return out;
  }

  scanProcessTable(): Promise<ProcessTableResult> {
    return Promise.resolve({ ok: false, error: `the process table of ${this.host} is not read over ssh` });
  }
}
