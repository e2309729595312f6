export { AgentctlSource, PRUNE_NOTE, type AgentctlOptions } from './client.js';
