// Rule: elsewhere. An entry that does not run on this host cannot be checked against this host's
// processes: remote when the registry names its host, unverified when it names none.

import { sanitize } from '../sanitize.js';
import type { SessionEntry } from '../types.js';
import { judged, type Judgement } from './judgement.js';

export function judgeElsewhere(entry: SessionEntry): Judgement {
  if (entry.machine === undefined || entry.machine.trim() === '') {
    return judged('unverified', 'the registry names no host for it, so it cannot be checked');
  }
  return judged('remote', `runs on ${sanitize(entry.machine, 64)}, not on this host: cannot be checked here`);
}
