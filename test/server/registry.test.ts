// The registry's rules with no sockets: an injected clock, events and log lines as plain arrays.
import { describe, expect, it } from 'vitest';
import { Registry, type RegistryEvent } from '../../src/server/index.js';
import { FakeClock, node, T0 } from './helpers.js';

function setup(ttlSeconds = 30) {
  const clock = new FakeClock();
  const events: RegistryEvent[] = [];
  const lines: string[] = [];
  let changes = 0;
  const registry = new Registry({
    now: clock.now,
    ttlSeconds,
    emit: (e) => events.push(e),
    log: (l) => lines.push(l),
    onChange: () => changes++,
  });
  return { clock, events, lines, registry, changes: () => changes };
}

describe('Registry', () => {
  it('logs one line per join, offline, removal and claim change, each naming why', () => {
    const { registry, lines, clock } = setup(1);
    const agent = registry.openConnection();
    const admin = registry.openConnection();
    registry.handle({ id: '1', method: 'register', params: node('n1', { pid: 7 }) }, agent);
    registry.handle({ id: '2', method: 'claim', params: { resource: 'r', holder: 'n1' } }, agent);
    registry.handle({ id: '3', method: 'register', params: node('n2', { port: 1 }) }, admin);
    registry.handle({ id: '4', method: 'register', params: node('n3', { port: 1 }) }, admin);
    registry.connectionClosed(agent);
    clock.advance(1000);
    registry.sweep();
    expect(lines).toEqual([
      'serve: joined n1 box:9000 pid 7',
      'serve: claim r acquired by n1',
      'serve: joined n2 box:1',
      'serve: removed n2 (evicted by machine:port box:1, now n3)',
      'serve: joined n3 box:1',
      'serve: offline n1 (connection closed)',
      'serve: claim r released (holder removed, holder n1)',
      `serve: removed n1 (swept: offline since ${T0}, ttl 1s)`,
    ]);
  });

  it('makes every registry string inert in log lines', () => {
    const { registry, lines } = setup();
    registry.handle({ method: 'register', params: node('evil\u001b]0;pwned\u0007', { machine: 'm\u202e' }) }, registry.openConnection());
    expect(lines).toEqual(['serve: joined evil^[]0;pwned^G m<U+202E>:9000']);
  });

  it('sweeps at exactly offline_since + ttl and last_seen + 3×ttl, not a second earlier', () => {
    const { registry, clock, events } = setup(10);
    const gone = registry.openConnection();
    const silent = registry.openConnection();
    registry.handle({ method: 'register', params: node('gone', { port: 1 }) }, gone);
    registry.handle({ method: 'register', params: node('silent', { port: 2 }) }, silent);
    registry.connectionClosed(gone);
    clock.advance(9999);
    expect(registry.sweep()).toBe(0);
    clock.advance(1);
    expect(registry.sweep()).toBe(1);
    clock.advance(19_999);
    registry.heartbeat(registry.openConnection()); // an unregistered connection's ping touches nothing
    expect(registry.sweep()).toBe(0);
    clock.advance(1);
    expect(registry.sweep()).toBe(1);
    expect(events.filter((e) => e.event === 'node_removed')).toEqual([
      { event: 'node_removed', id: 'gone' },
      { event: 'node_removed', id: 'silent' },
    ]);
  });

  it('reports changes for persistence, but not heartbeats or reads', () => {
    const { registry, changes } = setup();
    const agent = registry.openConnection();
    registry.handle({ method: 'register', params: node('n1') }, agent);
    expect(changes()).toBe(1);
    registry.heartbeat(agent);
    registry.handle({ method: 'list_nodes' }, agent);
    registry.handle({ method: 'ping' }, agent);
    expect(changes()).toBe(1);
  });

  it('returns undefined for requests the stock server drops', () => {
    const { registry } = setup();
    const conn = registry.openConnection();
    for (const bad of [null, 5, 'x', [], { id: 1, method: 'ping' }, { id: 'x' }, { method: 3 }]) {
      expect(registry.handle(bad, conn)).toBeUndefined();
    }
    expect(registry.handle({ id: 'x', method: 'ping', extra: true }, conn)).toEqual({
      id: 'x',
      result: { status: 'healthy', nodes: 0, version: '0.1.0' },
    });
  });
});

describe('Registry indexes', () => {
  it('evicts by machine:port as it is now: a node that moved is no longer found at its old port', () => {
    const { registry, events } = setup();
    const conn = registry.openConnection();
    const admin = registry.openConnection();
    registry.handle({ method: 'register', params: node('moved', { port: 1 }) }, conn);
    registry.handle({ method: 'claim', params: { resource: 'r1', holder: 'moved' } }, conn);
    registry.handle({ method: 'register', params: node('moved', { port: 2 }) }, conn);
    registry.handle({ method: 'register', params: node('newcomer', { port: 1 }) }, admin);
    expect(registry.listNodes().map((n) => n.id)).toEqual(['moved', 'newcomer']);
    registry.handle({ method: 'register', params: node('other-box', { port: 2, machine: 'elsewhere' }) }, admin);
    registry.handle({ method: 'register', params: node('replacement', { port: 2 }) }, admin);
    expect(registry.listNodes().map((n) => n.id)).toEqual(['newcomer', 'other-box', 'replacement']);
    expect(events.filter((e) => e.event === 'claim_released' || e.event === 'node_removed')).toEqual([
      { event: 'claim_released', resource: 'r1' },
      { event: 'node_removed', id: 'moved' },
    ]);
    expect(registry.listClaims()).toEqual([]);
  });
});
