// The registry's rules, with no sockets and an injected clock: which node each connection
// registered, and what every request does to the entries (their tables: registry-tables.ts).
import { sanitize } from '../core/sanitize.js';
import { invalidTimesText, type InvalidTime } from '../core/time.js';
import {
  errorOf,
  parseNodeInfo,
  parseRequest,
  PROTOCOL_VERSION,
  resultOf,
  SERVER_VERSION,
  wireClaim,
  wireNode,
  type Claim,
  type InitFrame,
  type NodeInfo,
  type RegistryEvent,
  type RpcResponse,
} from './protocol.js';
import {
  claimBytes,
  DEFAULT_LIMITS,
  nodeBytes,
  nodeFieldError,
  tooLong,
  type RegistryLimits,
} from './limits.js';
import { RegistryTables } from './registry-tables.js';

export interface RegistryOptions {
  /** Unix ms. */
  readonly now?: () => number;
  readonly ttlSeconds?: number;
  readonly emit?: (event: RegistryEvent) => void;
  readonly log?: (line: string) => void;
  /** Called after every change worth persisting (not after heartbeats). */
  readonly onChange?: () => void;
  /**
   * The process start time (Unix ms) to stamp on a registration that carries no pid_started_at,
   * or undefined to leave it unset. Default: never stamp.
   */
  readonly startTimeOf?: (node: Pick<NodeInfo, 'machine' | 'pid'>) => number | undefined;
  /** Bounds on what clients may store (default DEFAULT_LIMITS); any left out keep their default. */
  readonly limits?: Partial<RegistryLimits>;
}

/** One client connection. `registeredId` is the id it last sent in a valid `register`. */
export interface ConnectionContext {
  readonly serial: number;
  registeredId: string | undefined;
  /** Ids this connection registered last and that are still there. */
  readonly nodes: Set<string>;
  /** Resources this connection claimed last and that are still claimed. */
  readonly claims: Set<string>;
}

export type RemovalReason =
  | { kind: 'deregistered' }
  | { kind: 'evicted'; by: string }
  | { kind: 'swept-offline' }
  | { kind: 'swept-silent' };

export const DEFAULT_TTL_SECONDS = 30;

function field(params: unknown, name: string): unknown {
  return typeof params === 'object' && params !== null ? (params as Record<string, unknown>)[name] : undefined;
}

/** Claim names and holders must be non-empty strings: "" names nothing that could be locked. */
function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export class Registry {
  /** The connection that most recently registered each id: only its close marks the node offline. */
  private readonly owners = new Map<string, ConnectionContext>();
  /** Which connection counts each node against its limit (the one that registered it last). */
  private readonly registrants = new Map<string, ConnectionContext>();
  /** Which connection counts each claim against its limit (the one that claimed it last). */
  private readonly claimants = new Map<string, ConnectionContext>();
  private readonly tables = new RegistryTables();
  readonly limits: RegistryLimits;
  private serial = 0;
  private readonly now: () => number;
  readonly ttlSeconds: number;
  private readonly emit: (event: RegistryEvent) => void;
  private readonly log: (line: string) => void;
  private readonly onChange: () => void;
  private readonly startTimeOf: (node: Pick<NodeInfo, 'machine' | 'pid'>) => number | undefined;

  constructor(opts: RegistryOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.ttlSeconds = opts.ttlSeconds ?? DEFAULT_TTL_SECONDS;
    this.emit = opts.emit ?? (() => {});
    this.log = opts.log ?? (() => {});
    this.onChange = opts.onChange ?? (() => {});
    this.startTimeOf = opts.startTimeOf ?? (() => undefined);
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
  }

  /** What `init` takes now, at most: every node and claim at its largest encoding. */
  initBytesBound(): number {
    return this.tables.bytes;
  }

  /** Unix seconds on the injected clock, the unit of every registry timestamp. */
  nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }

  openConnection(): ConnectionContext {
    return { serial: ++this.serial, registeredId: undefined, nodes: new Set(), claims: new Set() };
  }

  listNodes(): NodeInfo[] {
    return [...this.tables.nodes.values()].map(wireNode);
  }

  /** One node as on the wire, or undefined. */
  nodeById(nodeId: string): NodeInfo | undefined {
    const node = this.tables.nodes.get(nodeId);
    return node && wireNode(node);
  }

  listClaims(): Claim[] {
    return [...this.tables.claims.values()].map(wireClaim);
  }

  initFrame(): InitFrame {
    return { event: 'init', nodes: this.listNodes(), protocol_version: PROTOCOL_VERSION, claims: this.listClaims() };
  }

  /** The response to one parsed JSON message, or undefined when the stock server would drop it. */
  handle(message: unknown, conn: ConnectionContext): RpcResponse | undefined {
    const request = parseRequest(message);
    if (!request) return undefined;
    const { id, params } = request;
    switch (request.method) {
      case 'register':
        return this.register(id, params, conn);
      case 'deregister':
        return this.deregister(id, params, conn);
      case 'list_nodes':
        return resultOf(id, this.listNodes());
      case 'ping':
        return resultOf(id, { status: 'healthy', nodes: this.tables.nodes.size, version: SERVER_VERSION });
      case 'claim':
        return this.claim(id, params, conn);
      case 'release_claim':
        return this.releaseClaim(id, params, conn);
      case 'list_claims':
        return resultOf(id, this.listClaims());
      default:
        // list_directories and spawn_agent touch the host: the server answers them (host-methods.ts).
        return errorOf(id, `Method not found: ${request.method}`);
    }
  }

  private register(id: string | undefined, params: unknown, conn: ConnectionContext): RpcResponse {
    if (params === undefined) return errorOf(id, 'Missing params');
    const invalid: InvalidTime[] = [];
    const parsed = parseNodeInfo(params, this.now(), invalid);
    if (!parsed) return errorOf(id, 'Invalid node info');
    // Taken without them, as a stock hypivisor ignores our extensions: said once, here.
    if (invalid.length > 0) this.log(`serve: ${sanitize(parsed.id)}: not kept, no time within 100 years of now: ${sanitize(invalidTimesText(invalid))}`);
    const tooBig = nodeFieldError(parsed, this.limits);
    if (tooBig !== undefined) return errorOf(id, tooBig);
    const now = this.nowSeconds();
    // One literal, in wire key order (undefined keys are left out of JSON).
    const node: NodeInfo = {
      id: parsed.id,
      machine: parsed.machine,
      cwd: parsed.cwd,
      port: parsed.port,
      status: 'active',
      pid: parsed.pid,
      offline_since: undefined,
      last_seen: now,
      registered_at: now,
      // A registration's own stamp wins; otherwise serve's, for a local pid alive right now.
      pid_started_at: parsed.pid_started_at ?? this.startTimeOf(parsed),
    };
    // A port on a machine belongs to one process, so an older entry there is stale. Never by cwd.
    const stale = this.tables.idsAt(node.port, node.machine).filter((other) => other !== node.id);
    const full = this.registerRefusal(node, conn, stale);
    if (full !== undefined) return errorOf(id, full);
    conn.registeredId = node.id;
    for (const other of stale) this.removeNode(other, { kind: 'evicted', by: node.id });
    this.tables.putNode(node);
    this.owners.set(node.id, conn);
    this.registrants.get(node.id)?.nodes.delete(node.id);
    this.registrants.set(node.id, conn);
    conn.nodes.add(node.id);
    const pid = node.pid === undefined ? '' : ` pid ${node.pid}`;
    this.log(`serve: joined ${sanitize(node.id)} ${sanitize(node.machine)}:${node.port}${pid}`);
    this.emit({ event: 'node_joined', node: wireNode(node) });
    this.onChange();
    return resultOf(id, { status: 'registered' });
  }

  /** Why `node` may not be stored now (a limit it would pass), or undefined. */
  private registerRefusal(node: NodeInfo, conn: ConnectionContext, stale: readonly string[]): string | undefined {
    const limits = this.limits;
    if (!conn.nodes.has(node.id) && conn.nodes.size - stale.filter((s) => conn.nodes.has(s)).length >= limits.nodesPerConnection) {
      return `too many nodes on this connection (limit ${limits.nodesPerConnection})`;
    }
    const existing = this.tables.nodes.has(node.id) ? 1 : 0;
    if (this.tables.nodes.size - existing - stale.length >= limits.nodes) return `registry is full (limit ${limits.nodes} nodes)`;
    let freed = this.tables.nodeSize(node.id);
    for (const other of stale) {
      freed += this.tables.nodeSize(other);
      for (const resource of this.tables.claimsOf(other)) freed += this.tables.claimSize(resource);
    }
    if (this.tables.bytes - freed + nodeBytes(node) > limits.initBytes) {
      return `registry is full (init would be larger than ${limits.initBytes} bytes)`;
    }
    return undefined;
  }

  private deregister(id: string | undefined, params: unknown, conn: ConnectionContext): RpcResponse {
    const target = field(params, 'id');
    if (typeof target !== 'string') return errorOf(id, 'Missing params.id');
    if (conn.registeredId !== undefined && conn.registeredId !== target) {
      return errorOf(id, 'Unauthorized: cannot deregister another node');
    }
    if (!this.tables.nodes.has(target)) return resultOf(id, { status: 'not_found' });
    this.removeNode(target, { kind: 'deregistered' });
    return resultOf(id, { status: 'deregistered' });
  }

  private claim(id: string | undefined, params: unknown, conn: ConnectionContext): RpcResponse {
    const resource = nonEmptyString(field(params, 'resource'));
    if (resource === undefined) return errorOf(id, 'Missing params.resource');
    const holder = nonEmptyString(field(params, 'holder'));
    if (holder === undefined) return errorOf(id, 'Missing params.holder');
    const tooBig = tooLong('resource', resource, this.limits.resourceBytes) ?? tooLong('holder', holder, this.limits.idBytes);
    if (tooBig !== undefined) return errorOf(id, tooBig);
    if (conn.registeredId !== undefined && conn.registeredId !== holder) {
      return errorOf(id, 'Unauthorized: cannot claim for another node');
    }
    if (!this.tables.nodes.has(holder)) return errorOf(id, `Unknown holder: ${holder}`);
    const existing = this.tables.claims.get(resource);
    if (existing && existing.holder !== holder) return errorOf(id, `Resource already claimed by ${existing.holder}`);
    const pid = field(params, 'pid');
    const claim: Claim = { resource, holder, acquired_at: this.nowSeconds() };
    if (typeof pid === 'number' && Number.isInteger(pid)) claim.pid = pid;
    const full = this.claimRefusal(claim, conn, existing !== undefined);
    if (full !== undefined) return errorOf(id, full);
    this.tables.putClaim(claim);
    this.claimants.get(resource)?.claims.delete(resource);
    this.claimants.set(resource, conn);
    conn.claims.add(resource);
    this.log(`serve: claim ${sanitize(resource)} ${existing ? 'refreshed' : 'acquired'} by ${sanitize(holder)}`);
    this.emit({ event: 'claim_acquired', claim: wireClaim(claim) });
    this.onChange();
    return resultOf(id, { status: 'claimed' });
  }

  private claimRefusal(claim: Claim, conn: ConnectionContext, refresh: boolean): string | undefined {
    const limits = this.limits;
    if (!conn.claims.has(claim.resource) && conn.claims.size >= limits.claimsPerConnection) {
      return `too many claims on this connection (limit ${limits.claimsPerConnection})`;
    }
    if (!refresh && this.tables.claims.size >= limits.claims) return `registry is full (limit ${limits.claims} claims)`;
    if (this.tables.bytes - this.tables.claimSize(claim.resource) + claimBytes(claim) > limits.initBytes) {
      return `registry is full (init would be larger than ${limits.initBytes} bytes)`;
    }
    return undefined;
  }

  private releaseClaim(id: string | undefined, params: unknown, conn: ConnectionContext): RpcResponse {
    const resource = nonEmptyString(field(params, 'resource'));
    if (resource === undefined) return errorOf(id, 'Missing params.resource');
    const existing = this.tables.claims.get(resource);
    if (!existing) return resultOf(id, { status: 'not_found' });
    if (conn.registeredId !== undefined && conn.registeredId !== existing.holder) {
      return errorOf(id, "Unauthorized: cannot release another node's claim");
    }
    this.dropClaim(existing, 'released');
    this.onChange();
    return resultOf(id, { status: 'released' });
  }

  private dropClaim(claim: Claim, why: string): void {
    this.tables.dropClaim(claim);
    this.claimants.get(claim.resource)?.claims.delete(claim.resource);
    this.claimants.delete(claim.resource);
    this.log(`serve: claim ${sanitize(claim.resource)} released (${why}, holder ${sanitize(claim.holder)})`);
    this.emit({ event: 'claim_released', resource: claim.resource });
  }

  /** Removes a node for any reason; its claims go first, each with its own event. */
  removeNode(nodeId: string, reason: RemovalReason): boolean {
    const node = this.tables.nodes.get(nodeId);
    if (!node) return false;
    for (const resource of this.tables.claimsOf(nodeId)) {
      const claim = this.tables.claims.get(resource);
      if (claim) this.dropClaim(claim, 'holder removed');
    }
    this.tables.dropNode(nodeId);
    this.owners.delete(nodeId);
    this.registrants.get(nodeId)?.nodes.delete(nodeId);
    this.registrants.delete(nodeId);
    this.log(`serve: removed ${sanitize(nodeId)} (${this.describe(reason, node)})`);
    this.emit({ event: 'node_removed', id: nodeId });
    this.onChange();
    return true;
  }

  private describe(reason: RemovalReason, node: NodeInfo): string {
    const ttl = this.ttlSeconds;
    switch (reason.kind) {
      case 'deregistered':
        return 'deregistered';
      case 'evicted':
        return `evicted by machine:port ${sanitize(node.machine)}:${node.port}, now ${sanitize(reason.by)}`;
      case 'swept-offline':
        return `swept: offline since ${node.offline_since}, ttl ${ttl}s`;
      case 'swept-silent':
        return `swept: no heartbeat since ${node.last_seen}, 3x ttl ${3 * ttl}s`;
    }
  }

  /** The connection closed: the node it registered (if it still owns it) goes offline, not away. */
  connectionClosed(conn: ConnectionContext): void {
    const nodeId = conn.registeredId;
    if (nodeId === undefined || this.owners.get(nodeId) !== conn) return;
    this.owners.delete(nodeId);
    const node = this.tables.nodes.get(nodeId);
    if (!node) return;
    // Counted at this size already (nodeBytes): offline with offline_since is its largest state.
    node.status = 'offline';
    node.offline_since = this.nowSeconds();
    this.log(`serve: offline ${sanitize(nodeId)} (connection closed)`);
    this.emit({ event: 'node_offline', id: nodeId });
    this.onChange();
  }

  /** A WebSocket ping frame from the connection: its node was seen just now. */
  heartbeat(conn: ConnectionContext): void {
    const node = conn.registeredId === undefined ? undefined : this.tables.nodes.get(conn.registeredId);
    if (node) node.last_seen = this.nowSeconds();
  }

  /** Offline nodes go once offline_since + ttl is reached; active ones once last_seen + 3×ttl is. */
  sweep(): number {
    const now = this.nowSeconds();
    const ttl = this.ttlSeconds;
    let removed = 0;
    for (const node of [...this.tables.nodes.values()]) {
      if (node.status === 'offline' && node.offline_since !== undefined && now >= node.offline_since + ttl) {
        if (this.removeNode(node.id, { kind: 'swept-offline' })) removed++;
      } else if (node.status === 'active' && node.last_seen !== undefined && now >= node.last_seen + 3 * ttl) {
        if (this.removeNode(node.id, { kind: 'swept-silent' })) removed++;
      }
    }
    return removed;
  }

  /**
   * Loads nodes and claims from a snapshot. Their connections are gone, so every node becomes
   * offline as of now and the normal sweep removes it unless it registers again.
   */
  restore(nodes: readonly NodeInfo[], claims: readonly Claim[]): void {
    const now = this.nowSeconds();
    const limits = this.limits;
    let skipped = 0;
    for (const node of nodes) {
      const restored: NodeInfo = { ...node, status: 'offline', offline_since: now };
      const fits = nodeFieldError(node, limits) === undefined && this.tables.nodes.size < limits.nodes;
      if (fits && this.tables.bytes - this.tables.nodeSize(node.id) + nodeBytes(restored) <= limits.initBytes) this.tables.putNode(restored);
      else skipped++;
    }
    for (const claim of claims) {
      if (!this.tables.nodes.has(claim.holder) || tooLong('resource', claim.resource, limits.resourceBytes) !== undefined) continue;
      if (this.tables.claims.size >= limits.claims || this.tables.bytes + claimBytes(claim) > limits.initBytes) skipped++;
      else this.tables.putClaim({ ...claim });
    }
    if (skipped > 0) this.log(`serve: state file: skipped ${skipped} entries over the registry's limits`);
  }

  snapshot(): { version: 1; nodes: NodeInfo[]; claims: Claim[] } {
    return { version: 1, nodes: this.listNodes(), claims: this.listClaims() };
  }
}
