import { describe, expect, it } from 'vitest';
import { parseFrame, toClaimEntry, toSessionEntry } from '../../src/sources/hypivisor/index.js';

describe('parseFrame', () => {
  it.each([
    ['not json', { kind: 'invalid-json' }],
    ['[1,2]', { kind: 'bad', why: 'not a JSON object' }],
    ['"text"', { kind: 'bad', why: 'not a JSON object' }],
    ['{"event":5}', { kind: 'bad', why: 'an event name that is not a string' }],
    ['{"event":"init"}', { kind: 'bad', why: 'init without a nodes array' }],
    ['{"event":"init","nodes":[],"protocol_version":"1"}', { kind: 'init', nodes: [], claims: undefined }],
    ['{"event":"init","nodes":[],"claims":[{"resource":"r"}]}', { kind: 'init', nodes: [], claims: [{ resource: 'r' }] }],
    ['{"event":"node_offline","id":"a"}', { kind: 'node_offline', id: 'a' }],
    ['{"event":"node_removed","id":7}', { kind: 'bad', why: 'node_removed without a string id' }],
    ['{"event":"claim_released","resource":"r"}', { kind: 'claim_released', resource: 'r' }],
    ['{"event":"brand_new"}', { kind: 'unknown-event', event: 'brand_new' }],
    ['{"id":"gw-1","result":{"status":"registered"}}', { kind: 'response', id: 'gw-1', result: { status: 'registered' } }],
    ['{"id":"gw-1","error":"Missing params.id"}', { kind: 'response', id: 'gw-1', error: 'Missing params.id' }],
    ['{"id":"gw-1","error":{"code":1}}', { kind: 'response', id: 'gw-1', error: '{"code":1}' }],
    ['{"id":1,"result":[]}', { kind: 'bad', why: 'a response without a string id' }],
  ])('%s', (text, expected) => expect(parseFrame(text)).toEqual(expected));
});

describe('toSessionEntry', () => {
  const seen = { firstObservedAt: 5, joinSeq: 2 };
  const NOW = Date.UTC(2026, 10, 22);
  it('keeps pid and port raw for core to judge, converts seconds to ms', () => {
    const e = toSessionEntry({ id: 'a', machine: 'h', cwd: '/x', port: '80', pid: -1, status: 'active', last_seen: 2 }, 's', seen, NOW);
    expect(e).toMatchObject({ id: 'a', port: '80', pid: -1, lastSeen: 2000, offline: false, firstObservedAt: 5, joinSeq: 2 });
  });
  it('drops nodes without a usable id and ignores fields of the wrong type', () => {
    expect(toSessionEntry({ id: 5 }, 's', seen, NOW)).toBeUndefined();
    expect(toSessionEntry({ id: '' }, 's', seen, NOW)).toBeUndefined();
    expect(toSessionEntry(null, 's', seen, NOW)).toBeUndefined();
    expect(toSessionEntry({ id: 'a', machine: 7, cwd: [], last_seen: 'soon', pid_started_at: 'x' }, 's', seen, NOW)).toMatchObject({
      machine: undefined,
      cwd: undefined,
      lastSeen: undefined,
      pidStartedAt: undefined,
    });
  });
  it('reads a timestamp that is no time (1e300, not a number, more than 100 years away) as unknown, and notes it', () => {
    const century = 100 * 365.25 * 86_400;
    const e = toSessionEntry({ id: 'a', last_seen: 'soon', offline_since: NOW / 1000 - century - 1, registered_at: 1e300, pid_started_at: 1e300 }, 's', seen, NOW)!;
    expect(e).toMatchObject({ lastSeen: undefined, offlineSince: undefined, registeredAt: undefined, pidStartedAt: undefined });
    expect(e.invalidTimes).toEqual([
      { field: 'last_seen', value: 'soon' },
      { field: 'offline_since', value: String(NOW / 1000 - century - 1) },
      { field: 'registered_at', value: '1e+300' },
      { field: 'pid_started_at', value: '1e+300' },
    ]);
    expect(toSessionEntry({ id: 'a', last_seen: NOW / 1000 - century, pid_started_at: null }, 's', seen, NOW)).toMatchObject({ lastSeen: NOW - century * 1000, invalidTimes: undefined });
    expect(toClaimEntry({ resource: 'r', acquired_at: -1e300 }, 's', NOW)).toMatchObject({ acquiredAt: undefined, invalidTimes: [{ field: 'acquired_at', value: '-1e+300' }] });
  });
  it('reads claims', () => {
    expect(toClaimEntry({ resource: 'r', holder: 'a', pid: 3, acquired_at: 1 }, 's', NOW)).toMatchObject({ resource: 'r', holder: 'a', pid: 3, acquiredAt: 1000 });
    expect(toClaimEntry({ holder: 'a' }, 's', NOW)).toBeUndefined();
  });
});
