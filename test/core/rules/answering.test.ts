// Rule answering, by table: a live local agent whose own port let the bound pass twice in a row
// (or hung up twice) is noted "not answering", never a problem and never evicted for it; one miss,
// an answer, an error, another verdict or no probe at all leave the judgement as it was. The
// probe is evidence either way.
import { describe, expect, it } from 'vitest';
import { NOT_ANSWERING, noteAnswering } from '../../../src/core/rules/answering.js';
import { judged, type Judgement } from '../../../src/core/rules/judgement.js';
import type { HandshakeFacts } from '../../../src/core/types.js';
import { alive, localEvidence, NOW, one, os, run, session } from './support.js';

const probe = (fields: Partial<HandshakeFacts>): HandshakeFacts => ({ port: 8101, result: 'answered', ms: 3, boundMs: 2_000, misses: 0, checkedAt: NOW, ...fields });
const LIVE = judged('live', 'pid 7 is alive');

const cases: [name: string, judgement: Judgement, facts: HandshakeFacts | undefined, note: string | undefined, reason: string][] = [
  ['no probe made', LIVE, undefined, undefined, 'pid 7 is alive'],
  ['answered', LIVE, probe({}), undefined, 'pid 7 is alive'],
  ['one timeout', LIVE, probe({ result: 'timeout', misses: 1 }), undefined, 'pid 7 is alive'],
  ['two timeouts in a row', LIVE, probe({ result: 'timeout', misses: 2 }), NOT_ANSWERING, 'pid 7 is alive; but its port 8101 gave no answer within 2s to a WebSocket upgrade, 2 times in a row'],
  ['two hang-ups in a row', LIVE, probe({ result: 'closed', misses: 2 }), NOT_ANSWERING, 'pid 7 is alive; but its port 8101 closed the connection without an answer to a WebSocket upgrade, 2 times in a row'],
  ['could not be asked (refused)', LIVE, probe({ result: 'error', detail: '127.0.0.1 and ::1 refused', misses: 0 }), undefined, 'pid 7 is alive'],
  ['a note already there is kept first', judged('live', 'placeholder, 3s old: pid 7 is alive', 'resolving'), probe({ result: 'timeout', misses: 2 }), `resolving, ${NOT_ANSWERING}`, 'placeholder, 3s old: pid 7 is alive; but its port 8101 gave no answer within 2s to a WebSocket upgrade, 2 times in a row'],
  ['suspended says more', judged('suspended', 'pid 7 is stopped'), probe({ result: 'timeout', misses: 2 }), undefined, 'pid 7 is stopped'],
  ['a ghost is a ghost', judged('ghost', 'pid 7 is gone (ESRCH)'), probe({ result: 'timeout', misses: 5 }), undefined, 'pid 7 is gone (ESRCH)'],
];

describe('rule: answering', () => {
  it.each(cases)('%s', (_name, judgement, facts, note, reason) => {
    const evidence = localEvidence();
    const j = noteAnswering(session('a', { pid: 7, port: 8101 }), judgement, facts ? new Map([[8101, facts]]) : new Map(), evidence);
    expect(j.verdict).toBe(judgement.verdict);
    expect(j.note).toBe(note);
    expect(j.reason).toBe(reason);
    expect(evidence.handshake).toBe(facts);
  });

  it('an entry without a usable port is never asked about', () => {
    const evidence = localEvidence();
    const j = noteAnswering(session('a', { pid: 7, port: 'x' }), LIVE, new Map([[8101, probe({ result: 'timeout', misses: 3 })]]), evidence);
    expect(j).toBe(LIVE);
    expect(evidence.handshake).toBeUndefined();
  });

  it('through reconcile: live, noted, no problem, not evictable; only on this host', () => {
    const facts = { ...os([alive(7)]), handshakes: new Map([[8101, probe({ result: 'timeout', misses: 2 })]]) };
    const f = one(run([session('a', { pid: 7, port: 8101 })], facts), 'a');
    expect(f).toMatchObject({ verdict: 'live', note: NOT_ANSWERING, problem: false, evictable: false, evidence: { handshake: { misses: 2 } } });
    const far = one(run([session('b', { pid: 7, port: 8101, machine: 'elsewhere' })], facts), 'b');
    expect(far.note).toBeUndefined();
    expect(far.evidence.handshake).toBeUndefined();
  });
});
