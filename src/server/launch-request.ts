// What serve and a tmux window's launcher (agent-launcher.ts) pass each other through files in a
// folder of their own: the agent to start (the request, read and deleted by the launcher) and how
// it ended (written by the launcher, read by serve while it waits for the agent to register).

/** What serve asks the launcher to start. */
export interface LaunchRequest {
  readonly command: string;
  readonly cwd: string;
  readonly env: Record<string, string>;
}

/** How the agent ended, or why it could not start. */
export type LaunchExit = { readonly code: number | null; readonly signal: string | null } | { readonly error: string };

export const REQUEST_FILE = 'request.json';
export const EXIT_FILE = 'exit.json';
