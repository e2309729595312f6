// The registry's entries and their indexes, with what `init` takes: nodes by id and by
// `port machine`, claims by resource and by holder, and every entry's largest encoding in bytes.
// No rules: registry.ts decides what goes in and out.
import { claimBytes, INIT_OVERHEAD_BYTES, nodeBytes } from './limits.js';
import type { Claim, NodeInfo } from './protocol.js';

export class RegistryTables {
  private readonly nodeMap = new Map<string, NodeInfo>();
  private readonly claimMap = new Map<string, Claim>();
  /** Ids by `port machine`: register evicts by machine:port without a scan. */
  private readonly byMachinePort = new Map<string, Set<string>>();
  /** Claimed resources by holder: a removal drops its node's claims without a scan. */
  private readonly claimsByHolder = new Map<string, Set<string>>();
  /** Bytes every node and claim takes in `init` at its largest, by id and by resource. */
  private readonly nodeSizes = new Map<string, number>();
  private readonly claimSizes = new Map<string, number>();
  private initBytes = INIT_OVERHEAD_BYTES;

  get nodes(): ReadonlyMap<string, NodeInfo> {
    return this.nodeMap;
  }

  get claims(): ReadonlyMap<string, Claim> {
    return this.claimMap;
  }

  /** What `init` takes now, at most: every node and claim at its largest encoding. */
  get bytes(): number {
    return this.initBytes;
  }

  nodeSize(id: string): number {
    return this.nodeSizes.get(id) ?? 0;
  }

  claimSize(resource: string): number {
    return this.claimSizes.get(resource) ?? 0;
  }

  /** Ids of the nodes at this port of this machine. */
  idsAt(port: number, machine: string): readonly string[] {
    return [...(this.byMachinePort.get(`${port} ${machine}`) ?? [])];
  }

  /** Resources this node holds. */
  claimsOf(holder: string): readonly string[] {
    return [...(this.claimsByHolder.get(holder) ?? [])];
  }

  putNode(node: NodeInfo): void {
    this.dropNode(node.id);
    this.nodeMap.set(node.id, node);
    const key = `${node.port} ${node.machine}`;
    let ids = this.byMachinePort.get(key);
    if (!ids) this.byMachinePort.set(key, (ids = new Set()));
    ids.add(node.id);
    const size = nodeBytes(node);
    this.nodeSizes.set(node.id, size);
    this.initBytes += size;
  }

  /** Forgets a node's entry and indexes (not its claims). */
  dropNode(nodeId: string): void {
    const node = this.nodeMap.get(nodeId);
    if (!node) return;
    this.nodeMap.delete(nodeId);
    const key = `${node.port} ${node.machine}`;
    const ids = this.byMachinePort.get(key);
    ids?.delete(nodeId);
    if (ids?.size === 0) this.byMachinePort.delete(key);
    this.initBytes -= this.nodeSizes.get(nodeId) ?? 0;
    this.nodeSizes.delete(nodeId);
  }

  putClaim(claim: Claim): void {
    this.initBytes -= this.claimSizes.get(claim.resource) ?? 0;
    this.claimMap.set(claim.resource, claim);
    let held = this.claimsByHolder.get(claim.holder);
    if (!held) this.claimsByHolder.set(claim.holder, (held = new Set()));
    held.add(claim.resource);
    const size = claimBytes(claim);
    this.claimSizes.set(claim.resource, size);
    this.initBytes += size;
  }

  dropClaim(claim: Claim): void {
    this.claimMap.delete(claim.resource);
    const held = this.claimsByHolder.get(claim.holder);
    held?.delete(claim.resource);
    if (held?.size === 0) this.claimsByHolder.delete(claim.holder);
    this.initBytes -= this.claimSizes.get(claim.resource) ?? 0;
    this.claimSizes.delete(claim.resource);
  }
}
