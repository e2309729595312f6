export { HypivisorSource, DEFAULT_MAX_PAYLOAD, DOUBT_RESYNC_MS, HYPIVISOR_DEFAULTS, type HypivisorOptions } from './client.js';
export { parseFrame, toSessionEntry, toClaimEntry, type Frame } from './wire.js';
