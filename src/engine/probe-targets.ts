// The engine's handle on the one rule for probe targets (core/probe-targets.ts): this host's
// name and aliases, fixed for the engine's life, with the memoized host test reused by
// fresh-finding checks.

import { chooseProbeTargets, localMachineTest, type IsLocalMachine, type ProbeTargetSet as Targets } from '../core/probe-targets.js';
import type { RegistryView } from '../core/types.js';

export type { Targets };

export class ProbeTargets {
  readonly isLocal: IsLocalMachine;

  constructor(hostName: string, aliases: readonly string[]) {
    this.isLocal = localMachineTest(hostName, aliases);
  }

  compute(view: RegistryView): Targets {
    return chooseProbeTargets(view, this.isLocal);
  }
}
