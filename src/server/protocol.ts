// The hypivisor wire format as `ghostwatch serve` speaks it (protocols.md §1 and §2): request
// parsing with the stock server's quirks, NodeInfo validation and the key order of every frame.
import { readTime, type InvalidTime } from '../core/time.js';

export const PROTOCOL_VERSION = '1';
/** What `ping` reports; the stock hypivisor's crate version, so clients see the same value. */
export const SERVER_VERSION = '0.1.0';

export interface NodeInfo {
  id: string;
  machine: string;
  cwd: string;
  port: number;
  status: string;
  pid?: number;
  offline_since?: number;
  last_seen?: number;
  /** Extension: Unix seconds, server clock, set on every register. */
  registered_at?: number;
  /** Extension: Unix ms, the process start time as the registering client read it. */
  pid_started_at?: number;
}

export interface Claim {
  resource: string;
  holder: string;
  pid?: number;
  acquired_at: number;
}

export interface RpcRequest {
  id?: string;
  method: string;
  params?: unknown;
}

export type RpcResponse = { id?: string; result: unknown } | { id?: string; error: string };

export type RegistryEvent =
  | { event: 'node_joined'; node: NodeInfo }
  | { event: 'node_offline'; id: string }
  | { event: 'node_removed'; id: string }
  | { event: 'claim_acquired'; claim: Claim }
  | { event: 'claim_released'; resource: string };

export interface InitFrame {
  event: 'init';
  nodes: NodeInfo[];
  protocol_version: string;
  claims: Claim[];
}

const U16_MAX = 65_535;
const U32_MAX = 4_294_967_295;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null;
}

function isIntegerIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/**
 * The stock server deserializes `{id?: string, method: string, params?: any}`; anything else
 * fails and is dropped without a reply. `null` counts as absent, as serde's Option does.
 */
export function parseRequest(value: unknown): RpcRequest | undefined {
  if (!isRecord(value)) return undefined;
  const { id, method, params } = value;
  if (!isAbsent(id) && typeof id !== 'string') return undefined;
  if (typeof method !== 'string') return undefined;
  const request: RpcRequest = { method };
  if (typeof id === 'string') request.id = id;
  if (!isAbsent(params)) request.params = params;
  return request;
}

export function resultOf(id: string | undefined, result: unknown): RpcResponse {
  return id === undefined ? { result } : { id, result };
}

export function errorOf(id: string | undefined, error: string): RpcResponse {
  return id === undefined ? { error } : { id, error };
}

/**
 * A NodeInfo as the stock server would accept it (serde: u16 port, u32 pid, i64 timestamps),
 * or undefined. Unknown fields are dropped except our two documented extensions. A timestamp that
 * is no time (core/time.ts, against `nowMs`) is not kept: it is pushed on `invalid` for the log,
 * and the node is taken without it (a stock server ignores our extensions altogether).
 */
export function parseNodeInfo(value: unknown, nowMs: number, invalid: InvalidTime[] = []): NodeInfo | undefined {
  if (!isRecord(value)) return undefined;
  const { id, machine, cwd, port, status, pid, last_seen, offline_since, pid_started_at } = value;
  if (typeof id !== 'string' || typeof machine !== 'string' || typeof cwd !== 'string') return undefined;
  if (typeof status !== 'string' || !isIntegerIn(port, 0, U16_MAX)) return undefined;
  if (!isAbsent(pid) && !isIntegerIn(pid, 0, U32_MAX)) return undefined;
  for (const stamp of [last_seen, offline_since]) {
    if (!isAbsent(stamp) && !isIntegerIn(stamp, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)) return undefined;
  }
  const node: NodeInfo = { id, machine, cwd, port, status };
  const seconds = (field: string, raw: unknown): number | undefined =>
    typeof raw === 'number' && readTime(field, raw, raw * 1000, nowMs, invalid) !== undefined ? raw : undefined;
  if (typeof pid === 'number') node.pid = pid;
  node.offline_since = seconds('offline_since', offline_since);
  node.last_seen = seconds('last_seen', last_seen);
  node.registered_at = seconds('registered_at', value.registered_at);
  node.pid_started_at = typeof pid_started_at === 'number' ? readTime('pid_started_at', pid_started_at, pid_started_at, nowMs, invalid) : undefined;
  return wireNode(node);
}

/**
 * A copy in wire order: the stock struct's field order (id, machine, cwd, port, status), then
 * pid, offline_since, last_seen, then our extensions; unknown values are omitted, never null.
 */
export function wireNode(node: NodeInfo): NodeInfo {
  const out: NodeInfo = { id: node.id, machine: node.machine, cwd: node.cwd, port: node.port, status: node.status };
  if (node.pid !== undefined) out.pid = node.pid;
  if (node.offline_since !== undefined) out.offline_since = node.offline_since;
  if (node.last_seen !== undefined) out.last_seen = node.last_seen;
  if (node.registered_at !== undefined) out.registered_at = node.registered_at;
  if (node.pid_started_at !== undefined) out.pid_started_at = node.pid_started_at;
  return out;
}

export function wireClaim(claim: Claim): Claim {
  const { resource, holder, pid, acquired_at } = claim;
  return pid === undefined ? { resource, holder, acquired_at } : { resource, holder, pid, acquired_at };
}

/** A claim as stored in a state file, or undefined when it is not one (its acquired_at no time: pushed on `invalid`). */
export function parseClaim(value: unknown, nowMs: number, invalid: InvalidTime[] = []): Claim | undefined {
  if (!isRecord(value)) return undefined;
  const { resource, holder, pid, acquired_at } = value;
  if (typeof resource !== 'string' || typeof holder !== 'string') return undefined;
  if (typeof acquired_at !== 'number' || readTime('acquired_at', acquired_at, acquired_at * 1000, nowMs, invalid) === undefined) return undefined;
  const claim: Claim = { resource, holder, acquired_at };
  if (typeof pid === 'number' && Number.isInteger(pid)) claim.pid = pid;
  return wireClaim(claim);
}
