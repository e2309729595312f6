import { afterEach, describe, expect, it, vi } from 'vitest';
import { RequestTimeout, RpcTable } from '../../src/plumbing/rpc.js';

afterEach(() => {
  vi.useRealTimers();
});

function table(opts: { timeoutMs?: number; onTimeout?: () => void; newId?: () => string } = {}) {
  return new RpcTable<string>({ timeoutMs: opts.timeoutMs ?? 1_000, timeoutMessage: (m, ms) => `no answer to ${m} within ${ms} ms`, ...opts });
}

describe('requests and the answers that match them', () => {
  it('gives every request its own string id and settles each by its own answer, in any order', async () => {
    const rpc = table();
    const sent: string[] = [];
    const a = rpc.call('list_nodes', (id) => sent.push(id));
    const b = rpc.call('list_claims', (id) => sent.push(id));
    expect(sent).toEqual(['gw-1', 'gw-2']);
    expect(rpc.answer('gw-2', { answer: 'claims' })).toBe(true);
    expect(rpc.answer('gw-1', { answer: 'nodes' })).toBe(true);
    await expect(a).resolves.toBe('nodes');
    await expect(b).resolves.toBe('claims');
    expect(rpc.open).toBe(0);
  });

  it('an answer to no request (never asked, or answered already) matches nothing', async () => {
    const rpc = table();
    const a = rpc.call('x', () => undefined);
    expect(rpc.answer('gw-9', { answer: 'stray' })).toBe(false);
    expect(rpc.answer('gw-1', { answer: 'first' })).toBe(true);
    expect(rpc.answer('gw-1', { answer: 'again' })).toBe(false);
    await expect(a).resolves.toBe('first');
  });

  it('read takes the answer as it is matched, before the caller\'s continuation; its result (or its throw) settles the request', async () => {
    const rpc = table();
    const order: string[] = [];
    const a = rpc.call('list_nodes', () => undefined, (answer) => (order.push(`read ${answer}`), answer.length));
    const b = rpc.call('list_claims', () => undefined, () => {
      throw new Error('not a list');
    });
    const done = a.then((n) => order.push(`then ${n}`));
    rpc.answer('gw-1', { answer: 'nodes' });
    order.push('after answer');
    rpc.answer('gw-2', { answer: 'claims' });
    await done;
    expect(order).toEqual(['read nodes', 'after answer', 'then 5']);
    await expect(b).rejects.toThrow('not a list');
  });

  it('an error answer rejects its request with that error', async () => {
    const rpc = table();
    const a = rpc.call('deregister', () => undefined);
    rpc.answer('gw-1', { error: new Error('Unauthorized') });
    await expect(a).rejects.toThrow('Unauthorized');
  });

  it('a request with no answer within the timeout fails, counted once; a late answer then matches nothing', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const onTimeout = vi.fn();
    const rpc = table({ timeoutMs: 300, onTimeout });
    const a = rpc.call('list_nodes', () => undefined);
    const settled = vi.fn();
    a.catch(settled);
    vi.advanceTimersByTime(299);
    await Promise.resolve();
    expect(settled).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    await expect(a).rejects.toBeInstanceOf(RequestTimeout);
    await expect(a).rejects.toThrow('no answer to list_nodes within 300 ms');
    expect(onTimeout).toHaveBeenCalledTimes(1);
    expect(rpc.answer('gw-1', { answer: 'late' })).toBe(false);
  });

  it('an answered request never times out', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const onTimeout = vi.fn();
    const rpc = table({ timeoutMs: 300, onTimeout });
    const a = rpc.call('x', () => undefined);
    rpc.answer('gw-1', { answer: 'ok' });
    vi.advanceTimersByTime(10_000);
    await expect(a).resolves.toBe('ok');
    expect(onTimeout).not.toHaveBeenCalled();
  });

  it('a lost connection fails every open request with its reason, and they time out no more', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const onTimeout = vi.fn();
    const rpc = table({ onTimeout });
    const calls = [rpc.call('a', () => undefined), rpc.call('b', () => undefined)];
    rpc.failAll('the connection closed');
    for (const c of calls) await expect(c).rejects.toThrow('the connection closed');
    expect(rpc.open).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(onTimeout).not.toHaveBeenCalled();
  });

  it('takes ids of another form when told (agentctl sends uuids)', () => {
    let n = 0;
    const rpc = table({ newId: () => `uuid-${++n}` });
    const sent: string[] = [];
    void rpc.call('session.list', (id) => sent.push(id)).catch(() => undefined);
    expect(sent).toEqual(['uuid-1']);
    expect(rpc.answer('uuid-1', { answer: 'x' })).toBe(true);
  });
});
