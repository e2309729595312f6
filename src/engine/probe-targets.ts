// The engine's handle on the one rule for probe targets (core/probe-targets.ts): this host's
// name and aliases, fixed for the engine's life, with the memoized host test reused by
// fresh-finding checks.

import { chooseProbeTargets, localMachineTest, namespacesNamed, type IsLocalMachine, type ProbeTargetSet as Targets } from '../core/probe-targets.js';
import type { PidNamespaceFacts, RegistryView } from '../core/types.js';

export type { Targets };

export class ProbeTargets {
  readonly isLocal: IsLocalMachine;

  constructor(hostName: string, aliases: readonly string[]) {
    this.isLocal = localMachineTest(hostName, aliases);
  }

  compute(view: RegistryView, namespaces?: PidNamespaceFacts): Targets {
    return chooseProbeTargets(view, this.isLocal, namespaces);
  }

  /** The pid namespaces this host's records name. */
  namespaces(view: RegistryView): Set<string> {
    return namespacesNamed(view, this.isLocal);
  }
}
