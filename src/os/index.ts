// The OS layer: liveness (kill + /proc or ps), process table scans and localhost port probes.
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
