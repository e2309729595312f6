// Rule: answering. A live agent that serves a WebSocket endpoint on its own port (hypivisor's
// agents) is asked, at the slow cadence, to answer an upgrade request there. One whose port has
// let the bound pass with no answer twice in a row is noted "not answering": hung, or too busy to
// serve anyone who connects. Never a problem on that alone and never evicted for it (a busy agent
// is slow, not dead); the probe and its timing are the evidence.

import { formatDuration } from '../duration.js';
import { isUsablePort } from '../pid.js';
import type { HandshakeFacts, SessionEntry } from '../types.js';
import { judged, type EvidenceDraft, type Judgement } from './judgement.js';

export const NOT_ANSWERING = 'not answering';
/** Probes in a row with no answer before a live agent is noted. */
export const MISSES_NOTED = 2;

/** The judgement of a local entry, noted when its own port stopped answering; its probe joins the evidence. */
export function noteAnswering(
  entry: SessionEntry,
  judgement: Judgement,
  handshakes: ReadonlyMap<number, HandshakeFacts> | undefined,
  evidence: EvidenceDraft,
): Judgement {
  if (handshakes === undefined || !isUsablePort(entry.port)) return judgement;
  const probe = handshakes.get(entry.port);
  if (probe === undefined) return judgement;
  evidence.handshake = probe;
  if (judgement.verdict !== 'live' || probe.misses < MISSES_NOTED) return judgement;
  const note = judgement.note !== undefined ? `${judgement.note}, ${NOT_ANSWERING}` : NOT_ANSWERING;
  const what = probe.result === 'closed' ? 'closed the connection without an answer' : `gave no answer within ${formatDuration(probe.boundMs)}`;
  return judged('live', `${judgement.reason}; but its port ${probe.port} ${what} to a WebSocket upgrade, ${probe.misses} times in a row`, note);
}
