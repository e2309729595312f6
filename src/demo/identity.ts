// Who the demo's agents pretend to be: session ids, projects and working directories. Ids are
// derived from a fixed seed, so they look like real uuids yet stay the same from run to run.
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The host of the demo's remote node: a name that can never be this host. */
export const REMOTE_MACHINE = 'build-01.example.internal';
/** A pid on the remote host: meaningless here, which is the point of the `remote` verdict. */
export const REMOTE_PID = 48_213;
export const REMOTE_PORT = 7_860;
export const REMOTE_CWD = '/home/ci/work/release-builds';

/** Projects the evolving ghosts cycle through. */
export const GHOST_PROJECTS = [
  'billing-service',
  'payments-worker',
  'auth-service',
  'notification-hub',
  'ml-experiments',
  'design-system',
  'feature-flags',
  'log-shipper',
  'checkout-flow',
  'image-resizer',
  'rate-limiter',
  'email-templates',
] as const;

/** A uuid (version-4 layout) that is a pure function of `seed`. */
export function demoId(seed: string): string {
  const hex = createHash('sha256').update(`ghostwatch-demo:${seed}`).digest('hex');
  const variant = '89ab'[Number.parseInt(hex[16]!, 16) % 4]!;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** `~/work/<project>`, spelled out: registries carry absolute paths. */
export function demoCwd(project: string): string {
  return join(homedir(), 'work', project);
}
