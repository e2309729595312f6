// The engine's handle on the one rule for probe targets (core/probe-targets.ts): this host's
// name and aliases, fixed for the engine's life, with the memoized host test reused by
// fresh-finding checks.

import { localMachineTest, namespaceSteps, probeTargetSteps, type IsLocalMachine, type ProbeTargetSet as Targets } from '../core/probe-targets.js';
import type { PidNamespaceFacts, RegistryView } from '../core/types.js';

export type { Targets };

export class ProbeTargets {
  readonly isLocal: IsLocalMachine;

  constructor(hostName: string, aliases: readonly string[]) {
    this.isLocal = localMachineTest(hostName, aliases);
  }

  /** The pids and ports to watch, pausing every few thousand entries (see probeTargetSteps). */
  compute(view: RegistryView, namespaces?: PidNamespaceFacts): Generator<void, Targets, void> {
    return probeTargetSteps(view, this.isLocal, namespaces);
  }

  /** The pid namespaces this host's records name, pausing likewise. */
  namespaces(view: RegistryView): Generator<void, Set<string>, void> {
    return namespaceSteps(view, this.isLocal);
  }
}
