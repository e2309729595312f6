// What a demo agent tells the cast, one JSON object per line on its stdout. The cast prints
// `text` (headless mode) and acts on `kind`: `staged` counts toward "cast ready", `resolved`
// makes it start the next pending agent.

export type ReportKind = 'registered' | 'claimed' | 'offline' | 'ghost' | 'zombie' | 'resolved' | 'removed' | 'staged' | 'error';

export interface AgentReport {
  readonly kind: ReportKind;
  readonly text: string;
}

export function formatReport(report: AgentReport): string {
  return `${JSON.stringify(report)}\n`;
}

/** A line from an agent's stdout, or undefined when it is not a report (then it is shown as is). */
export function parseReport(line: string): AgentReport | undefined {
  try {
    const value = JSON.parse(line) as Partial<AgentReport>;
    if (typeof value.kind === 'string' && typeof value.text === 'string') return value as AgentReport;
  } catch {
    // not a report
  }
  return undefined;
}

/** Environment variables the cast hands its agents. */
export const ENV_URL = 'GHOSTWATCH_DEMO_URL';
/** Which cycle a pending agent is (its resolved id depends on it). */
export const ENV_SEQ = 'GHOSTWATCH_DEMO_SEQ';
/** Overrides of the cast's timings, for tests and for a faster-moving demo. */
export const ENV_GHOST_EVERY_MS = 'GHOSTWATCH_DEMO_GHOST_EVERY_MS';
export const ENV_RESOLVE_AFTER_MS = 'GHOSTWATCH_DEMO_RESOLVE_AFTER_MS';
/**
 * An agent in a tmux pane of the demo's window is tmux's child, not the demo's: it reports on a
 * Unix socket at this path (agent-link.ts) instead of its stdout, which is the pane's terminal.
 */
export const ENV_LINK = 'GHOSTWATCH_DEMO_LINK';
/** What it says first on that socket: which of the demo's agents it is. */
export const ENV_LINK_KEY = 'GHOSTWATCH_DEMO_LINK_KEY';
