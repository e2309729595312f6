export { HypivisorSource, DEFAULT_MAX_PAYLOAD, type HypivisorOptions } from './client.js';
export { parseFrame, toSessionEntry, toClaimEntry, type Frame } from './wire.js';
