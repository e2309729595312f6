// The registry's state and rules, with no sockets and an injected clock: nodes by id, claims by
// resource, which node each connection registered, and what every request does to them.
import { sanitize } from '../core/sanitize.js';
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
  INIT_OVERHEAD_BYTES,
  nodeBytes,
  nodeFieldError,
  tooLong,
  type RegistryLimits,
} from './limits.js';

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
  private readonly nodes = new Map<string, NodeInfo>();
  private readonly claims = new Map<string, Claim>();
  /** The connection that most recently registered each id: only its close marks the node offline. */
  private readonly owners = new Map<string, ConnectionContext>();
  /** Which connection counts each node against its limit (the one that registered it last). */
  private readonly registrants = new Map<string, ConnectionContext>();
  /** Which connection counts each claim against its limit (the one that claimed it last). */
  private readonly claimants = new Map<string, ConnectionContext>();
  /** Ids by `port machine`: register evicts by machine:port without a scan. */
  private readonly byMachinePort = new Map<string, Set<string>>();
  /** Claimed resources by holder: a removal drops its node's claims without a scan. */
  private readonly claimsByHolder = new Map<string, Set<string>>();
  /** Bytes every node and claim takes in `init` at its largest, by id and by resource. */
  private readonly nodeSizes = new Map<string, number>();
  private readonly claimSizes = new Map<string, number>();
  private bytes = INIT_OVERHEAD_BYTES;
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
    return this.bytes;
  }

  private putNode(node: NodeInfo): void {
    this.dropNodeEntry(node.id);
    this.nodes.set(node.id, node);
    const key = `${node.port} ${node.machine}`;
    let ids = this.byMachinePort.get(key);
    if (!ids) this.byMachinePort.set(key, (ids = new Set()));
    ids.add(node.id);
    const size = nodeBytes(node);
    this.nodeSizes.set(node.id, size);
    this.bytes += size;
  }

  /** Forgets a node's entry and indexes (not its claims, not its owner). */
  private dropNodeEntry(nodeId: string): void {
    const node = this.nodes.get(nodeId);
    if (!node) return;
    this.nodes.delete(nodeId);
    const key = `${node.port} ${node.machine}`;
    const ids = this.byMachinePort.get(key);
    ids?.delete(nodeId);
    if (ids?.size === 0) this.byMachinePort.delete(key);
    this.bytes -= this.nodeSizes.get(nodeId) ?? 0;
    this.nodeSizes.delete(nodeId);
  }

  private putClaim(claim: Claim): void {
    this.bytes -= this.claimSizes.get(claim.resource) ?? 0;
    this.claims.set(claim.resource, claim);
    let held = this.claimsByHolder.get(claim.holder);
    if (!held) this.claimsByHolder.set(claim.holder, (held = new Set()));
    held.add(claim.resource);
    const size = claimBytes(claim);
    this.claimSizes.set(claim.resource, size);
    this.bytes += size;
  }

  /** Unix seconds on the injected clock, the unit of every registry timestamp. */
  nowSeconds(): number {
    return Math.floor(this.now() / 1000);
  }

  openConnection(): ConnectionContext {
    return { serial: ++this.serial, registeredId: undefined, nodes: new Set(), claims: new Set() };
  }

  listNodes(): NodeInfo[] {
    return [...this.nodes.values()].map(wireNode);
  }

  /** One node as on the wire, or undefined. */
  nodeById(nodeId: string): NodeInfo | undefined {
    const node = this.nodes.get(nodeId);
    return node && wireNode(node);
  }

  listClaims(): Claim[] {
    return [...this.claims.values()].map(wireClaim);
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
        return resultOf(id, { status: 'healthy', nodes: this.nodes.size, version: SERVER_VERSION });
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
    const parsed = parseNodeInfo(params);
    if (!parsed) return errorOf(id, 'Invalid node info');
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
    const stale = [...(this.byMachinePort.get(`${node.port} ${node.machine}`) ?? [])].filter((other) => other !== node.id);
    const full = this.registerRefusal(node, conn, stale);
    if (full !== undefined) return errorOf(id, full);
    conn.registeredId = node.id;
    for (const other of stale) this.removeNode(other, { kind: 'evicted', by: node.id });
    this.putNode(node);
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
    const existing = this.nodes.has(node.id) ? 1 : 0;
    if (this.nodes.size - existing - stale.length >= limits.nodes) return `registry is full (limit ${limits.nodes} nodes)`;
    let freed = this.nodeSizes.get(node.id) ?? 0;
    for (const other of stale) {
      freed += this.nodeSizes.get(other) ?? 0;
      for (const resource of this.claimsByHolder.get(other) ?? []) freed += this.claimSizes.get(resource) ?? 0;
    }
    if (this.bytes - freed + nodeBytes(node) > limits.initBytes) {
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
    if (!this.nodes.has(target)) return resultOf(id, { status: 'not_found' });
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
    if (!this.nodes.has(holder)) return errorOf(id, `Unknown holder: ${holder}`);
    const existing = this.claims.get(resource);
    if (existing && existing.holder !== holder) return errorOf(id, `Resource already claimed by ${existing.holder}`);
    const pid = field(params, 'pid');
    const claim: Claim = { resource, holder, acquired_at: this.nowSeconds() };
    if (typeof pid === 'number' && Number.isInteger(pid)) claim.pid = pid;
    const full = this.claimRefusal(claim, conn, existing !== undefined);
    if (full !== undefined) return errorOf(id, full);
    this.putClaim(claim);
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
    if (!refresh && this.claims.size >= limits.claims) return `registry is full (limit ${limits.claims} claims)`;
    if (this.bytes - (this.claimSizes.get(claim.resource) ?? 0) + claimBytes(claim) > limits.initBytes) {
      return `registry is full (init would be larger than ${limits.initBytes} bytes)`;
    }
    return undefined;
  }

  private releaseClaim(id: string | undefined, params: unknown, conn: ConnectionContext): RpcResponse {
    const resource = nonEmptyString(field(params, 'resource'));
    if (resource === undefined) return errorOf(id, 'Missing params.resource');
    const existing = this.claims.get(resource);
    if (!existing) return resultOf(id, { status: 'not_found' });
    if (conn.registeredId !== undefined && conn.registeredId !== existing.holder) {
      return errorOf(id, "Unauthorized: cannot release another node's claim");
    }
    this.dropClaim(existing, 'released');
    this.onChange();
    return resultOf(id, { status: 'released' });
  }

  private dropClaim(claim: Claim, why: string): void {
    this.claims.delete(claim.resource);
    const held = this.claimsByHolder.get(claim.holder);
    held?.delete(claim.resource);
    if (held?.size === 0) this.claimsByHolder.delete(claim.holder);
    this.bytes -= this.claimSizes.get(claim.resource) ?? 0;
    this.claimSizes.delete(claim.resource);
    this.claimants.get(claim.resource)?.claims.delete(claim.resource);
    this.claimants.delete(claim.resource);
    this.log(`serve: claim ${sanitize(claim.resource)} released (${why}, holder ${sanitize(claim.holder)})`);
    this.emit({ event: 'claim_released', resource: claim.resource });
  }

  /** Removes a node for any reason; its claims go first, each with its own event. */
  removeNode(nodeId: string, reason: RemovalReason): boolean {
    const node = this.nodes.get(nodeId);
    if (!node) return false;
    for (const resource of [...(this.claimsByHolder.get(nodeId) ?? [])]) {
      const claim = this.claims.get(resource);
      if (claim) this.dropClaim(claim, 'holder removed');
    }
    this.dropNodeEntry(nodeId);
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
    const node = this.nodes.get(nodeId);
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
    const node = conn.registeredId === undefined ? undefined : this.nodes.get(conn.registeredId);
    if (node) node.last_seen = this.nowSeconds();
  }

  /** Offline nodes go once offline_since + ttl is reached; active ones once last_seen + 3×ttl is. */
  sweep(): number {
    const now = this.nowSeconds();
    const ttl = this.ttlSeconds;
    let removed = 0;
    for (const node of [...this.nodes.values()]) {
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
      const fits = nodeFieldError(node, limits) === undefined && this.nodes.size < limits.nodes;
      if (fits && this.bytes - (this.nodeSizes.get(node.id) ?? 0) + nodeBytes(restored) <= limits.initBytes) this.putNode(restored);
      else skipped++;
    }
    for (const claim of claims) {
      if (!this.nodes.has(claim.holder) || tooLong('resource', claim.resource, limits.resourceBytes) !== undefined) continue;
      if (this.claims.size >= limits.claims || this.bytes + claimBytes(claim) > limits.initBytes) skipped++;
      else this.putClaim({ ...claim });
    }
    if (skipped > 0) this.log(`serve: state file: skipped ${skipped} entries over the registry's limits`);
  }

  snapshot(): { version: 1; nodes: NodeInfo[]; claims: Claim[] } {
    return { version: 1, nodes: this.listNodes(), claims: this.listClaims() };
  }
}
