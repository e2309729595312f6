import { describe, expect, it } from 'vitest';
import { judgeElsewhere } from '../../../src/core/rules/elsewhere.js';
import { session } from './support.js';

// Rule elsewhere: an entry not on this host.
const cases: [name: string, machine: string | undefined, verdict: string, reason: RegExp][] = [
  ['named host', 'laptop', 'remote', /^runs on laptop, not on this host: cannot be checked here$/],
  ['no host', undefined, 'unverified', /names no host/],
  ['a blank host is no host', '  ', 'unverified', /names no host/],
  ['a hostile host name is shown inert', 'evil\u001b]0;x\u0007', 'remote', /evil\^\[\]0;x\^G/],
];

describe('rule: elsewhere', () => {
  it.each(cases)('%s', (_name, machine, verdict, reason) => {
    const j = judgeElsewhere(session('a', { machine }));
    expect(j.verdict).toBe(verdict);
    expect(j.reason).toMatch(reason);
  });
});
