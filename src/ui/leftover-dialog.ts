// The K dialog: exactly which processes will be signalled (pid, command, ports, user), whose they
// were, what is sent and when, and, when ghostwatch runs as root and some belong to other users,
// that it will signal those too. No is the default. Pure: lines for the confirm dialog's drawing.
import { formatDuration } from '../core/duration.js';
import { sanitize } from '../core/sanitize.js';
import type { LeftoverTarget } from '../engine/end-leftovers.js';
import type { ConfirmLine } from './components/confirm.js';
import { commandText, ownerText, portsText } from './leftover-text.js';

export function leftoverConfirmLines(targets: readonly LeftoverTarget[], graceMs: number, running: boolean): { head: ConfirmLine[]; list: ConfirmLine[] } {
  const n = targets.length;
  const agents = new Set(targets.map((t) => `${t.agent.source}\u0000${t.agent.id}`)).size;
  const head: ConfirmLine[] = [
    { text: `End ${n === 1 ? 'this process' : `these ${n} processes`} that ${agents === 1 ? 'a dead agent' : `${agents} dead agents`} left running?`, bold: true },
    {
      text: `Each gets SIGTERM; one still running ${formatDuration(graceMs)} later gets SIGKILL. Right before each signal it is checked again (the same process: its exact start; under no live agent) and written to the audit log first.`,
    },
  ];
  const others = targets.filter((t) => t.leftover.otherUser);
  if (others.length > 0) {
    const users = [...new Set(others.map((t) => ownerText(t.leftover)))].join(', ');
    head.push({
      text: `ghostwatch runs as root: ${others.length === 1 ? 'one of them belongs' : `${others.length} of them belong`} to another user (${users}) and will be signalled too.`,
      bold: true,
      tone: 'warning',
    });
  }
  head.push({ text: running ? 'Ending them... (Esc stops: no more SIGTERM, no SIGKILL)' : 'y: end them.  n: cancel.' });
  const list = targets.map((t): ConfirmLine => {
    const l = t.leftover;
    const ports = portsText(l);
    const text = `  ${commandText(l, 160)}${ports ? `  listens on ${ports}` : ''}  user ${ownerText(l)}${l.otherUser ? ' (another user)' : ''}  left by ${sanitize(t.agent.id, 60)} (pid ${t.agent.pid})`;
    return { text, tone: l.otherUser ? 'warning' : 'problem' };
  });
  return { head, list };
}
