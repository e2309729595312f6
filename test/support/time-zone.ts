// Local times on screen ("since 09:27") read the same wherever the tests run: the file's tests
// see one zone, and the zone the process had comes back after them.
import { afterAll, beforeAll } from 'vitest';

export function inTimeZone(zone: string): void {
  let before: string | undefined;
  beforeAll(() => {
    before = process.env.TZ;
    process.env.TZ = zone;
  });
  afterAll(() => {
    if (before === undefined) delete process.env.TZ;
    else process.env.TZ = before;
  });
}
