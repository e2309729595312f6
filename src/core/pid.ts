// Which registry-supplied values may be used as a pid or a port. kill(0) and kill(-1)
// address process groups and pid 1 is init: none of them is ever an agent's process.

/** Largest pid any supported kernel hands out (Linux PID_MAX_LIMIT is 2^22; int32 is the hard bound). */
export const MAX_PID = 0x7fffffff;

/** Why `value` cannot be used as a pid, or undefined when it can. */
export function pidProblem(value: unknown): string | undefined {
  if (value === undefined || value === null) return 'no pid';
  if (typeof value !== 'number') return `pid is a ${typeof value}, not a number`;
  if (!Number.isFinite(value)) return 'pid is not a finite number';
  if (!Number.isInteger(value)) return 'pid is not a whole number';
  if (value <= 0) return 'pid 0 and negative pids address process groups';
  if (value === 1) return 'pid 1 is init, never an agent';
  if (value > MAX_PID) return 'pid is larger than any process id';
  return undefined;
}

export function isUsablePid(value: unknown): value is number {
  return pidProblem(value) === undefined;
}

export function isUsablePort(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 65_535;
}
