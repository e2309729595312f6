// What a demo agent prints in its own tmux pane (src/demo/pane-output.ts): who it is, its pid, what
// it is staged as, the way back to the monitor; each report timestamped; nothing that a terminal
// would take as a command.
import { describe, expect, it } from 'vitest';
import { paneHeader, paneLine, paneTitle, titleSequence } from '../../src/demo/pane-output.js';

describe('the pane of a demo agent', () => {
  it('opens with who the agent is, its pid, what it is staged as and the way back', () => {
    const header = paneHeader({ role: 'live', name: 'api-gateway', flags: ['--claim'], pid: 4242, url: 'ws://127.0.0.1:9/ws' });
    expect(header.join('\n')).toBe(
      [
        'ghostwatch demo agent: live api-gateway, pid 4242',
        'staged as live: a healthy agent, registered the way pi-socket does; it also holds a claim on its folder (held)',
        'registry ws://127.0.0.1:9/ws; it runs until the demo ends',
        "back to the monitor: tmux's last-window (the prefix, then l)",
        '',
      ].join('\n'),
    );
    expect(paneHeader({ role: 'supervisor', name: 'x', flags: [], pid: 1, url: '' })[1]).toMatch(/^staged as the ghost factory/);
  });

  it('titles the pane with role, name and pid, and the title cannot end its escape sequence early', () => {
    expect(paneTitle('live', 'web-dashboard', 77)).toBe('live web-dashboard (77)');
    const seq = titleSequence('evil\u001b\\\u001b]2;owned\u0007');
    expect(seq.startsWith('\u001b]2;')).toBe(true);
    expect(seq.slice(4, -2)).not.toMatch(/[\u0000-\u001f\u007f]/);
  });

  it('prints each report as HH:MM:SS and the text, made inert', () => {
    expect(paneLine('registered\u001b[2J', new Date(2026, 0, 2, 3, 4, 5))).toMatch(/^03:04:05 registered\S*\[2J$/);
    expect(paneLine('x', new Date(2026, 0, 2, 3, 4, 5))).not.toContain('\u001b');
  });
});
