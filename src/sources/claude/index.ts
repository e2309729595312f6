export { claudeSources, defaultClaudePaths, FileSource, CLAUDE_VIEW_READ_ONLY, type ClaudePaths, type FileSourceOptions } from './source.js';
export { CLAIM_HEARTBEAT_STALE_MS } from './formats.js';
