// The engine: the live loop between sources, the OS and the UI. createEngine() is the entry;
// `stats()` on the returned engine is a debug counter of recomputes, publishes and probe runs.
// Its probes (a ProbeProvider from os/) and its clock are injected; both default to the real ones.
export { createEngine } from './engine.js';
export type { EngineOptions, EngineStats, LiveEngine } from './options.js';
export type { SshSettings } from './remote-hosts.js';
export { realClock, type Clock, type TimerHandle } from '../plumbing/clock.js';
export { defaultAuditLogPath } from './audit-log.js';
export { READ_ONLY_DETAIL } from './evict.js';
export type * from './types.js';
// What the UI shows of a source's state: it reaches sources/ only through the engine.
export { STATUS_TRAITS } from '../sources/types.js';
export type { ConnectionStatus, SourceState } from '../sources/types.js';
