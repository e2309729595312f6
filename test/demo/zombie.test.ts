import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { stageZombie } from '../../src/demo/zombie.js';
import { describeOn } from '../support/platform.js';

describeOn(['linux'], 'the zombie is found and checked through /proc')('stageZombie', () => {
  it('makes a real zombie whose parent never reaps it, and killing the parent ends it', async () => {
    const zombie = await stageZombie();
    try {
      const stat = readFileSync(`/proc/${zombie.pid}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      expect(state).toBe('Z');
      expect(Number(ppid)).toBe(zombie.parent.pid);
      expect(zombie.startedAt).toBeLessThanOrEqual(Date.now());
    } finally {
      await new Promise((resolve) => {
        zombie.parent.once('exit', resolve);
        zombie.parent.kill('SIGKILL');
      });
    }
  });
});
