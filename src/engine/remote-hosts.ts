// The engine's remote hosts: one ssh provider per configured machine (an SshFleet), each with its
// own facts tracker, so each host's probe rounds run on their own: the local round never waits for
// a remote one, and a slow host slows nobody but itself. What reconcile reads of them is one
// RemoteHostFacts per host (its state and its facts); what the UI reads is one status per host.

import { firstHostMatching } from '../core/host.js';
import { sanitize } from '../core/sanitize.js';
import { chooseProbeTargets, type IsLocalMachine } from '../core/probe-targets.js';
import type { Targets } from './probe-targets.js';
import type { OsFacts, RegistryView, RemoteHostFacts } from '../core/types.js';
import type { SshHostConfig, SshHostStatus } from '../os/ssh-command.js';
import { SshFleet } from '../os/ssh-fleet.js';
import type { SshHost, SshOptions } from '../os/ssh-provider.js';
import type { Clock } from '../plumbing/clock.js';
import { OsFactsTracker } from './os-facts.js';
import type { ProbeProgress } from './snapshot.js';
import type { HostStatus } from './types.js';

/** What the engine is told about the hosts to verify over ssh (see EngineOptions.ssh). */
export interface SshSettings {
  /** The machines to verify and how to reach each (--ssh MACHINE=DEST, the config file's "hosts"). */
  readonly hosts: readonly SshHostConfig[];
  /** Every other machine the registries name too, its name as the destination (--ssh-all). */
  readonly all?: boolean | undefined;
  /** The ssh client and its timeouts (tests point sshCommand at a client with their own config). */
  readonly options?: SshOptions | undefined;
  /** Hosts handshaking at once, at most. Default 8. */
  readonly maxConnecting?: number | undefined;
}

/**
 * Remote cadences are this many times the local ones. The remote watches its pids and ports on
 * its own and pushes changes (SshHost.watch: kill -0 every 0.5 s there), so the monitor polls
 * only as a slow net: a full and a port probe every 4 s × PUSHED_POLL_FACTOR.
 */
export const REMOTE_CADENCE_SCALE = 2;
/** --ssh-all contacts at most this many machines a registry names: a hostile registry cannot make it dial thousands. */
export const MAX_SSH_ALL_HOSTS = 64;
/** A machine name --ssh-all will dial: a host name, never an option or a path. */
const DIALABLE = /^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$/;
/** Machine names whose host is remembered; a registry naming more is matched again after a clear. */
const MAX_CACHED_MACHINES = 65_536;

interface Remote {
  readonly host: SshHost;
  readonly tracker: OsFactsTracker;
  readonly isOn: IsLocalMachine;
  /** Every watched pid and port has been probed since the host last came up. */
  fresh: boolean;
  /** Why it last went down, kept while it retries: its rows do not flap between down and connecting. */
  lastDown: SshHostStatus | undefined;
  /** It has pushed more than its budget once already: said once, not at every flood. */
  floodTold: boolean;
  /** What it is told to watch (its entries' pids and ports). */
  targets: Targets;
  /** The targets its remote watchers were armed with on this connection (a key), if any. */
  armed: string | undefined;
}

export interface RemoteHostsOptions {
  readonly ssh: SshSettings;
  readonly hostName: string;
  readonly hostAliases: readonly string[];
  readonly isLocal: IsLocalMachine;
  readonly intervalScale: number;
  readonly clock: Clock;
  readonly now: () => number;
  /** A host's state or facts changed. */
  readonly onChange: () => void;
  /** One line for the person, said once (a host that floods, the first time it does). */
  readonly onNotice?: ((line: string) => void) | undefined;
}

export class RemoteHosts {
  private readonly fleet: SshFleet;
  private readonly remotes: Remote[] = [];
  /** Which host each machine name seen is on (null: none of them), see ownerOf. */
  private readonly owners = new Map<string, Remote | null>();
  /** The first host a machine name matches, in configuration order (rebuilt when a host is added). */
  private firstMatching: (machine: string) => Remote | undefined = () => undefined;
  /** The hosts by their exact machine name (the first configured of a name): findings and statuses name them so, once per row. */
  private readonly byMachine = new Map<string, Remote>();
  private running = false;

  constructor(private readonly opts: RemoteHostsOptions) {
    // The engine's clock times the hosts too (requests, handshakes, backoff), unless the settings give one.
    const options: SshOptions = { clock: opts.clock, ...opts.ssh.options, onChange: (status) => this.onStatus(status) };
    // Machines that are this host are never dialled: this host's entries are judged here.
    const configs = opts.ssh.hosts.filter((c) => !opts.isLocal(c.machine));
    this.fleet = new SshFleet(configs, options, opts.ssh.maxConnecting ?? 8);
    for (const host of this.fleet.hosts) this.track(host);
  }

  /** Whether any host is (or may become, with --ssh-all) verified over ssh. */
  get enabled(): boolean {
    return this.remotes.length > 0 || this.opts.ssh.all === true;
  }

  private track(host: SshHost): Remote {
    // An entry belongs to the first host whose machine it names (as reconcile reads it), never to this host.
    const isOn: IsLocalMachine = (m) => this.ownerOf(m)?.host === host;
    const tracker = new OsFactsTracker({
      intervalScale: this.opts.intervalScale * REMOTE_CADENCE_SCALE,
      probes: host,
      clock: this.opts.clock,
      now: this.opts.now,
      onChange: this.opts.onChange,
      pushed: true,
    });
    const remote: Remote = { host, tracker, isOn, fresh: false, lastDown: undefined, floodTold: false, targets: { pids: new Set(), ports: new Set() }, armed: undefined };
    host.onPush = (pids, ports) => tracker.applyFresh(pids, ports);
    this.remotes.push(remote);
    if (!this.byMachine.has(host.config.machine)) this.byMachine.set(host.config.machine, remote);
    this.firstMatching = firstHostMatching(this.remotes, (r) => r.host.config.machine);
    // A machine that matched no host (or a later one) may be this one's now.
    this.owners.clear();
    return remote;
  }

  /**
   * The host whose entries a machine's are: the first configured one it matches (reconcile takes
   * the same), none for this host. One memo for every host: a registry naming thousands of
   * machines costs one match per name, not one per name and host at every change.
   */
  private ownerOf(machine: string | undefined): Remote | undefined {
    if (machine === undefined) return undefined;
    let owner = this.owners.get(machine);
    if (owner === undefined) {
      if (this.owners.size >= MAX_CACHED_MACHINES) this.owners.clear();
      owner = (this.opts.isLocal(machine) ? undefined : this.firstMatching(machine)) ?? null;
      this.owners.set(machine, owner);
    }
    return owner ?? undefined;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    for (const r of this.remotes) r.tracker.start();
    this.fleet.start();
  }

  /** Every tracker stopped and every ssh closed (the remote loops end with their stdin). */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all([...this.remotes.map((r) => r.tracker.stop()), this.fleet.stop()]);
  }

  /** The R key: every host that answers probes all its targets now (not awaited: a slow host never holds the table). */
  refresh(): void {
    for (const r of this.remotes) if (r.host.state.state === 'up') void r.tracker.probeAllNow();
  }

  /** New registry lists: each host watches the pids and ports of its own entries. */
  setView(view: RegistryView): void {
    if (this.opts.ssh.all) this.addNamedMachines(view);
    for (const r of this.remotes) {
      r.targets = chooseProbeTargets(view, r.isOn);
      r.tracker.setTargets(r.targets);
      this.arm(r);
    }
  }

  /** Have an up host's remote watch its targets, unless it already watches exactly these. */
  private arm(r: Remote): void {
    if (r.host.state.state !== 'up') return;
    const pids = [...r.targets.pids].sort((a, b) => a - b);
    const ports = [...r.targets.ports].sort((a, b) => a - b);
    const key = `${pids.join(' ')}|${ports.join(' ')}`;
    if (key === r.armed) return;
    r.armed = key;
    void r.host.watch(pids, ports).then((ok) => {
      // Not armed after all (dropped meanwhile, or refused): the next view or reconnect arms it again.
      if (!ok && r.armed === key) r.armed = undefined;
    });
  }

  /** --ssh-all: a host for every machine the registries name that is neither this host nor configured. */
  private addNamedMachines(view: RegistryView): void {
    for (const s of view.sessions) {
      if (this.remotes.length >= MAX_SSH_ALL_HOSTS) return;
      const m = s.machine;
      if (m === undefined || this.ownerOf(m) !== undefined || !DIALABLE.test(m) || this.opts.isLocal(m)) continue;
      const remote = this.track(this.fleet.add({ machine: m, dest: m }));
      if (this.running) remote.tracker.start();
    }
  }

  /** Whether entries of this machine are verified over ssh (configured, whatever its state now). */
  verifies(machine: string): boolean {
    return this.ownerOf(machine) !== undefined;
  }

  private onStatus(status: SshHostStatus): void {
    const r = this.byMachine.get(status.machine);
    if (r && status.state === 'down') r.lastDown = status;
    if (r && status.kind === 'flood' && !r.floodTold) {
      r.floodTold = true;
      this.opts.onNotice?.(`ssh ${sanitize(status.machine, 64)} ${sanitize(status.reason ?? 'floods', 200)}`);
    }
    // A new connection runs a new loop with no watchers.
    if (r && status.state !== 'up') r.armed = undefined;
    if (r && status.state === 'up') {
      r.lastDown = undefined;
      this.arm(r);
      // What was read while it was down says nothing: every pid and port again, now.
      r.fresh = false;
      void r.tracker.probeAllNow().then(() => {
        if (r.host.state.state === 'up') r.fresh = true;
        this.opts.onChange();
      });
    } else if (r) r.fresh = false;
    this.opts.onChange();
  }

  /** A host retrying after a failure is still down, for that reason, until it is up again. */
  private stateOf(r: Remote): SshHostStatus {
    const s = r.host.state;
    return s.state === 'connecting' && r.lastDown !== undefined ? { ...s, state: 'down', reason: r.lastDown.reason, kind: r.lastDown.kind } : s;
  }

  /** Each host as reconcile reads it. Empty without hosts. */
  facts(): RemoteHostFacts[] {
    return this.remotes.map((r) => this.hostFacts(r, r.tracker.facts));
  }

  /** Each host as reconcile reads it, and the progress of its probes, copied as they stand now (see OsFactsTracker.frozen). */
  frozen(): { facts: RemoteHostFacts[]; progressOf: (machine: string) => ProbeProgress | undefined } {
    const frozen = new Map(this.remotes.map((r) => [r, r.tracker.frozen()]));
    return {
      facts: this.remotes.map((r) => this.hostFacts(r, frozen.get(r)!.facts)),
      progressOf: (machine) => {
        const r = this.byMachine.get(machine);
        return r ? frozen.get(r)?.progress : undefined;
      },
    };
  }

  private hostFacts(r: Remote, facts: OsFacts): RemoteHostFacts {
    const s = this.stateOf(r);
    // A host just up whose first probes are still out has nothing to say yet: still connecting.
    const state = s.state === 'up' && !r.fresh ? 'connecting' : s.state;
    return { machine: r.host.config.machine, transport: 'ssh', state, reason: s.reason, rttMs: s.rttMs, facts };
  }

  /** Each host's state for the header and check --json, in configuration order. */
  statuses(): HostStatus[] {
    return this.remotes.map((r) => {
      const s = this.stateOf(r);
      return {
        machine: sanitize(s.machine, 64),
        dest: sanitize(s.dest, 100),
        transport: 'ssh',
        state: s.state,
        reason: s.reason === undefined ? undefined : sanitize(s.reason, 200),
        kind: s.kind,
        rttMs: s.rttMs === undefined ? undefined : Math.round(s.rttMs),
        remoteName: s.remoteName === undefined ? undefined : sanitize(s.remoteName, 80),
        connections: r.host.connections,
      };
    });
  }

  /** No host is still making up its mind: each is down, or up with every target probed since. */
  get settled(): boolean {
    // Up: probed since it came up, and every target it was given since (a view that arrives after
    // the host is up brings pids nobody asked it about yet).
    return this.remotes.every((r) => (r.host.state.state === 'up' ? r.fresh && r.tracker.firstProbesDone : r.host.state.state === 'down'));
  }

  /** The host whose entries these are, for the checking / dead-since marks and the detail's "last checked". */
  progressOf(machine: string): (ProbeProgress & { pidCheckedAt(pid: number): number | undefined; portCheckedAt(port: number): number | undefined }) | undefined {
    return this.byMachine.get(machine)?.tracker;
  }

  /** The provider, known facts and host test for an eviction re-probe of an entry of `machine`. */
  probeContext(machine: string): { provider: SshHost; known: OsFacts; isOn: IsLocalMachine; hostFacts: (facts: OsFacts) => RemoteHostFacts } | undefined {
    const r = this.byMachine.get(machine);
    if (!r) return undefined;
    return {
      provider: r.host,
      known: r.tracker.facts,
      isOn: r.isOn,
      hostFacts: (facts) => {
        const s = this.stateOf(r);
        return { machine: r.host.config.machine, transport: 'ssh', state: s.state, reason: s.reason, rttMs: s.rttMs, facts };
      },
    };
  }

  /** Facts an eviction re-probe read, for the live view. */
  applyFresh(machine: string, facts: Pick<OsFacts, 'pids' | 'ports'>): void {
    this.byMachine.get(machine)?.tracker.applyFresh(facts.pids, facts.ports);
  }

  /** Counters for the bench: connections made, bytes sent, probe rounds run (kill ticks, full and port probes), pushed lines read and dropped, per host. */
  counters(): { machine: string; connections: number; bytesSent: number; rounds: number; linesPushed: number; linesDropped: number }[] {
    return this.remotes.map((r) => {
      const c = r.tracker.counts;
      const h = r.host;
      return { machine: h.config.machine, connections: h.connections, bytesSent: h.bytesSent, rounds: c.kill + c.full + c.ports, linesPushed: h.linesPushed, linesDropped: h.linesDropped };
    });
  }
}
