export * from './types.js';
export * from './pid.js';
export * from './host.js';
export * from './sanitize.js';
export * from './duration.js';
export * from './reconcile.js';
export * from './evict-plan.js';
export * from './probe-targets.js';
