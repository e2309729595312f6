// The embedded registry (`ghostwatch serve`): hypivisor wire protocol plus ghostwatch's extensions.
export {
  startRegistryServer,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_MAX_PAYLOAD,
  DEFAULT_MAX_CONNECTIONS,
  READ_PAUSE_BYTES,
  type RegistryServer,
  type RegistryServerOptions,
} from './server.js';
export {
  Registry,
  DEFAULT_TTL_SECONDS,
  type ConnectionContext,
  type RegistryOptions,
  type RemovalReason,
} from './registry.js';
export {
  PROTOCOL_VERSION,
  SERVER_VERSION,
  parseRequest,
  parseNodeInfo,
  wireNode,
  wireClaim,
  type NodeInfo,
  type Claim,
  type RpcRequest,
  type RpcResponse,
  type RegistryEvent,
  type InitFrame,
} from './protocol.js';
export * from './limits.js';
export { INIT_HEARTBEAT_MS } from './init-cache.js';
export { DEFAULT_BUFFER_BUDGET, WRITE_OVERHEAD } from './buffer-budget.js';
export { SLOW_PEER_BYTES, type PeerStats } from './peer.js';
export { isLoopbackHost } from '../os/loopback.js';
export { loadStateFile, StateFileWriter, type StateSnapshot } from './state-file.js';
export { tokenFromUrl, tokenMatches, percentDecodeLenient } from './auth.js';
export { startAgentProxy, DEFAULT_PROXY_CONNECT_TIMEOUT_MS, PROXY_BUFFER_LIMIT, PROXY_HARD_LIMIT, type ProxyStats } from './agent-proxy.js';
export { listDirectories, spawnAgent, validateSpawnPath, SPAWN_DISABLED } from './host-methods.js';
export { linuxProcessStart, startStamper } from './process-start.js';
