// For the rule tests: fresh evidence on this host, and the fixtures of the reconcile tests.
import { newEvidence, type EvidenceDraft } from '../../../src/core/rules/judgement.js';

export * from '../fixtures.js';

export function localEvidence(): EvidenceDraft {
  return newEvidence({ machine: 'devbox', local: true, matchedAs: 'exact' });
}
