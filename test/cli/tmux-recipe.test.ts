// The tmux status-line recipe of README and `status --help` fits what it configures: tmux cuts
// status-right at status-right-length (default 40), and a line with every problem would not fit.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PROBLEM_VERDICTS, problemCounts } from '../../src/core/verdicts.js';
import { statusUsage } from '../../src/cli/status.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
/** The longest line `status --format tmux` prints: every problem, four digits each. */
const longest = `gw ${problemCounts(Object.fromEntries(PROBLEM_VERDICTS.map((v) => [v, 9999]))).join(' ')}`;

describe('the tmux status-line recipe', () => {
  for (const [where, text] of [['README', README], ['status --help', statusUsage()]] as const) {
    it(`${where} sets status-right-length to hold the longest line and the clock after it`, () => {
      expect(text).toContain("set -g status-right '#(ghostwatch status --format tmux-color) %H:%M'");
      const m = /set -g status-right-length (\d+)/.exec(text);
      expect(m, `${where} gives status-right-length`).not.toBeNull();
      // The clock: " %H:%M" is six columns.
      expect(longest.length + 6).toBeLessThanOrEqual(Number(m![1]));
      expect(longest.length + 6).toBeGreaterThan(40); // tmux's default would cut it
    });
  }
});
