// A probe provider the test scripts: which pids live (and as what), which ports are open and who
// serves them, whether the process table reads. Every call is logged with the fake time it was
// made at; a kind of probe can be held (its answers wait until released) to test overlap.
import type { KillResult, PidFacts, PortFacts, ProcessInfo } from '../../src/core/types.js';
import type { PidProbeOptions, PortProbeRunOptions, ProbeProvider, TableScanOptions } from '../../src/os/provider.js';
import type { ProcessTableResult } from '../../src/os/process-table.js';
import type { FakeClock } from './fake-clock.js';

export type CallKind = 'kill' | 'full' | 'ports' | 'table';

export interface ProbeCall {
  readonly kind: CallKind;
  /** Fake ms of the clock when the call was made. */
  readonly t: number;
  /** The pids or ports asked about. */
  readonly items: readonly number[];
}

export interface FakeProcess {
  readonly kill?: KillResult;
  readonly state?: string;
  readonly startedAt?: number;
  readonly name?: string;
}

export class FakeProbes implements ProbeProvider {
  readonly host = 'fakehost';
  readonly calls: ProbeCall[] = [];
  /** Live processes by pid; any other pid is gone (ESRCH). */
  readonly processes = new Map<number, FakeProcess>();
  /** Open ports and the pids serving them; any other port is refused. */
  readonly openPorts = new Map<number, readonly number[]>();
  tableAvailable = true;
  /** What stillRunning answers for a live pid (the local provider's fast path says true). */
  fastPath = true;
  private readonly held = new Map<CallKind, (() => void)[]>();
  private readonly holding = new Set<CallKind>();

  constructor(private readonly clock: FakeClock) {}

  /** Calls of a kind, as the fake times they were made at. */
  times(kind: CallKind): number[] {
    return this.calls.filter((c) => c.kind === kind).map((c) => c.t);
  }

  of(kind: CallKind): ProbeCall[] {
    return this.calls.filter((c) => c.kind === kind);
  }

  /** From now on, answers of this kind wait for release(kind). */
  hold(kind: CallKind): void {
    this.holding.add(kind);
  }

  /** Stop holding this kind and answer every held call. */
  release(kind: CallKind): void {
    this.holding.delete(kind);
    for (const go of this.held.get(kind)?.splice(0) ?? []) go();
  }

  stillRunning(pid: number): boolean {
    return this.fastPath && (this.processes.get(pid)?.kill ?? 'ESRCH') === 'ok';
  }

  async probePids(pids: readonly number[], opts: PidProbeOptions): Promise<ReadonlyMap<number, PidFacts>> {
    this.calls.push({ kind: opts.full ? 'full' : 'kill', t: this.clock.t, items: [...pids] });
    await this.gate(opts.full ? 'full' : 'kill');
    const now = opts.now ?? (() => this.clock.now());
    const result = new Map<number, PidFacts>();
    for (const pid of pids) {
      const p = this.processes.get(pid);
      const kill = p?.kill ?? 'ESRCH';
      const alive = kill === 'ok' || kill === 'EPERM';
      result.set(pid, {
        pid,
        kill,
        checkedAt: now(),
        state: opts.full && alive ? (p?.state ?? 'S') : undefined,
        startedAt: opts.full && alive ? p?.startedAt : undefined,
      });
    }
    return result;
  }

  async probePortFacts(ports: readonly number[], opts: PortProbeRunOptions): Promise<ReadonlyMap<number, PortFacts>> {
    this.calls.push({ kind: 'ports', t: this.clock.t, items: [...ports] });
    await this.gate('ports');
    const now = opts.now ?? (() => this.clock.now());
    const result = new Map<number, PortFacts>();
    for (const port of ports) {
      const owners = this.openPorts.get(port);
      result.set(port, {
        port,
        result: owners ? 'open' : 'refused',
        checkedAt: now(),
        owners: owners && owners.length > 0 ? owners : undefined,
      });
    }
    return result;
  }

  async scanProcessTable(opts: TableScanOptions): Promise<ProcessTableResult> {
    this.calls.push({ kind: 'table', t: this.clock.t, items: [...(opts.pids ?? [])] });
    await this.gate('table');
    if (!this.tableAvailable) return { ok: false, error: 'process table unavailable: no /proc here' };
    const processes = new Map<number, ProcessInfo>();
    for (const pid of opts.pids ?? []) {
      const p = this.processes.get(pid);
      if (p && p.kill !== 'ESRCH') processes.set(pid, { pid, ppid: 2, name: p.name ?? 'agent', cmd: `${p.name ?? 'agent'} --serve`, startedAt: p.startedAt });
    }
    return { ok: true, strategy: 'proc', processes, scannedAt: this.clock.now() };
  }

  private gate(kind: CallKind): Promise<void> {
    if (!this.holding.has(kind)) return Promise.resolve();
    return new Promise((resolve) => {
      const list = this.held.get(kind) ?? [];
      list.push(resolve);
      this.held.set(kind, list);
    });
  }
}
