// The OS layer: liveness (kill + /proc or ps), process table scans, localhost port probes and port owners,
// and the one ProbeProvider interface the engine reads them through (localProbeProvider: this machine).
export {
  localProbeProvider,
  type ProbeProvider,
  type PidProbeOptions,
  type PortProbeRunOptions,
  type TableScanOptions,
} from './provider.js';
export {
  probePids,
  parseProcStat,
  parseDarwinPs,
  ticksToEpochMs,
  killResultFromError,
  linuxClock,
  type ProbeOptions,
} from './liveness.js';
export {
  scanProcessTable,
  procAvailable,
  type ProcessInfo,
  type ProcessTableResult,
  type ProcessTableStrategy,
  type ScanOptions,
} from './process-table.js';
export { probePort, probePorts, DEFAULT_PORT_TIMEOUT_MS, type PortProbeOptions } from './port-probe.js';
export { probePortFacts, type PortFactsOptions } from './port-facts.js';
export {
  parseProcNetTcp,
  decodeProcNetAddress,
  listeningSockets,
  PROC_NET_PATHS,
  type ListeningSocket,
  type ListeningSocketsResult,
  type ProcNetParse,
  type ProcNetPaths,
  type AddressFamily,
  type ByteOrder,
} from './proc-net.js';
export {
  portOwners,
  socketOwners,
  createOwnerHints,
  DEFAULT_MAX_FDS,
  type OwnerHints,
  type PortOwnersOptions,
  type PortOwnersResult,
  type PortOwnership,
  type PortSocket,
  type SocketOwnersOptions,
  type SocketOwnersResult,
} from './port-owner.js';
export { createTmux, readParents, NO_SERVER_RETRY_MS, type PaneJump, type PaneLookup, type TmuxControl, type TmuxOptions, type TmuxPane } from './tmux.js';
