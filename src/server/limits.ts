// What one client may put into `ghostwatch serve`: the size of every stored string, how many
// nodes and claims one connection may hold, the totals, and the byte budget that keeps `init`
// (and `list_nodes`) within the max payload clients accept. A refusal is an error reply that
// names the limit; serve keeps serving.
import { wireClaim, wireNode, type Claim, type NodeInfo } from './protocol.js';

/** Node ids (and claim holders, which are node ids). A UUID is 36 bytes; `pending-<pid>` less. */
export const MAX_ID_BYTES = 256;
/** A host name: 253 for a DNS name, 255 for any that a kernel accepts. */
export const MAX_MACHINE_BYTES = 255;
/** A working directory: PATH_MAX on Linux. */
export const MAX_CWD_BYTES = 4096;
/** `status` is required on register (and then set to "active"); real agents send "active". */
export const MAX_STATUS_BYTES = 64;
/** A claimed resource: a path or a name. */
export const MAX_RESOURCE_BYTES = 4096;
/** Nodes one connection may hold registered at once (a real agent registers one). */
export const MAX_NODES_PER_CONNECTION = 64;
/** Claims acquired through one connection and still held. */
export const MAX_CLAIMS_PER_CONNECTION = 256;
export const MAX_NODES = 100_000;
export const MAX_CLAIMS = 100_000;
/**
 * The largest `init` frame serve builds: ghostwatch's own client accepts 16 MiB by default
 * (`--max-payload`), so every node and claim is counted at its largest encoding against this.
 */
export const MAX_INIT_BYTES = 16 * 1024 * 1024;
/**
 * The largest request read on `/ws` (serve's --max-payload when that is smaller): a register at
 * every field's limit is under 5 KiB; the agent proxy relays frames up to --max-payload.
 */
export const MAX_REQUEST_BYTES = 1024 * 1024;
/** JSON nesting allowed in a request; real frames nest 3 levels (request, params, value). */
export const MAX_JSON_DEPTH = 32;

export interface RegistryLimits {
  readonly idBytes: number;
  readonly machineBytes: number;
  readonly cwdBytes: number;
  readonly statusBytes: number;
  readonly resourceBytes: number;
  readonly nodesPerConnection: number;
  readonly claimsPerConnection: number;
  readonly nodes: number;
  readonly claims: number;
  readonly initBytes: number;
}

export const DEFAULT_LIMITS: RegistryLimits = {
  idBytes: MAX_ID_BYTES,
  machineBytes: MAX_MACHINE_BYTES,
  cwdBytes: MAX_CWD_BYTES,
  statusBytes: MAX_STATUS_BYTES,
  resourceBytes: MAX_RESOURCE_BYTES,
  nodesPerConnection: MAX_NODES_PER_CONNECTION,
  claimsPerConnection: MAX_CLAIMS_PER_CONNECTION,
  nodes: MAX_NODES,
  claims: MAX_CLAIMS,
  initBytes: MAX_INIT_BYTES,
};

/** `init` with no nodes and no claims: what every frame costs before its entries. */
export const INIT_OVERHEAD_BYTES = Buffer.byteLength(JSON.stringify({ event: 'init', nodes: [], protocol_version: '1', claims: [] }));

/** "cwd is longer than 4096 bytes", or undefined when `value` fits. */
export function tooLong(name: string, value: string, limit: number): string | undefined {
  // A UTF-16 string never takes fewer UTF-8 bytes than it has code units: most need no count.
  if (value.length <= limit / 3) return undefined;
  return Buffer.byteLength(value, 'utf8') > limit ? `${name} is longer than ${limit} bytes` : undefined;
}

/** The refusal for the first over-long string field of a node, or undefined. */
export function nodeFieldError(node: Pick<NodeInfo, 'id' | 'machine' | 'cwd' | 'status'>, limits: RegistryLimits): string | undefined {
  return (
    tooLong('id', node.id, limits.idBytes) ??
    tooLong('machine', node.machine, limits.machineBytes) ??
    tooLong('cwd', node.cwd, limits.cwdBytes) ??
    tooLong('status', node.status, limits.statusBytes)
  );
}

/**
 * The bytes a node takes in `init` (plus its comma) in its largest state: offline, with
 * offline_since set. Its other fields only change to values of the same width (Unix seconds).
 */
export function nodeBytes(node: NodeInfo): number {
  const largest = { ...node, status: 'offline', offline_since: node.offline_since ?? node.last_seen ?? node.registered_at ?? 0 };
  return Buffer.byteLength(JSON.stringify(wireNode(largest))) + 1;
}

/** The bytes a claim takes in `init`, plus its comma. */
export function claimBytes(claim: Claim): number {
  return Buffer.byteLength(JSON.stringify(wireClaim(claim))) + 1;
}

/**
 * How deeply `text` nests JSON arrays and objects, counting only brackets outside strings, and
 * stopping once past `limit`: a linear scan that needs no parse and no recursion.
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
