// Agents in panes of the demo's tmux window (issue 27): inside tmux, each agent of the cast is the
// process of a pane of its own in `gw-demo` (demo-window.ts), so the monitor's PANE column names
// that pane and `o` shows the agent at work (it prints who it is and what it does there). The pane
// is tmux's child, not the demo's: it reports on the demo's socket (agent-link.ts), which also
// tells it when the demo is gone and tells the demo when it ended. An agent no pane has room for
// (tmux keeps a minimum pane size), or that tmux would not start, runs as the demo's child as
// before, and the demo says so.
//
// The pane runs `env -u HYPI_TOKEN -u HYPIVISOR_WS NAME=VALUE... node agent.js <role> <name>`:
// a new pane gets the environment of the tmux server, not the demo's, so env(1) leaves the
// credentials out (as childEnv does for a child) and adds the demo's variables, then execs node:
// the pane's process is the agent itself. Nothing secret is on that command line (it is visible in
// ps): the demo's registry URL, timings, the socket's path and the agent's key (the socket's
// folder is this user's alone).
import { existsSync } from 'node:fs';
import { errorCode } from '../os/liveness.js';
import { openLink, type AgentLink } from './agent-link.js';
import type { AgentOutput, AgentProcess, AgentSpec, AgentStarter } from './agent-process.js';
import { CREDENTIALS } from './child-env.js';
import type { DemoWindow } from './demo-window.js';
import { ENV_LINK, ENV_LINK_KEY } from './reports.js';

/** The demo's own variables (its timings) travel to a pane agent; the rest of its environment does not. */
const DEMO_VARIABLE = /^GHOSTWATCH_DEMO_[A-Z0-9_]*$/;
/** How often an agent that has not reached the demo yet is looked for (it may have died starting). */
const UNLINKED_POLL_MS = 250;

export interface PaneAgentsOptions {
  readonly script: string;
  readonly window: DemoWindow;
  /** Where an agent goes when no pane can take it. */
  readonly fallback: AgentStarter;
  /** One line per thing worth saying (no room for a pane, tmux refused). */
  readonly say: (line: string) => void;
  /** The demo's environment; its GHOSTWATCH_DEMO_* variables are passed on. Default process.env. */
  readonly env?: NodeJS.ProcessEnv;
}

export function startPaneAgents(opts: PaneAgentsOptions): AgentStarter {
  /** Lines whose agent has not connected yet: their folders are removed on the way out. */
  const listening = new Set<AgentLink>();
  const env = opts.env ?? process.env;
  const envCommand = existsSync('/usr/bin/env') ? '/usr/bin/env' : 'env';
  // env(1) takes every word with a '=' before the command as an assignment.
  const execPath = process.execPath.includes('=') ? undefined : process.execPath;

  /** Why tmux cannot be used at all (it failed, not for want of room): every later agent goes elsewhere, unsaid. */
  let unusable: string | undefined;

  const elsewhere = (spec: AgentSpec, output: AgentOutput, why: string): Promise<AgentProcess | { error: string }> => {
    opts.say(`[${spec.role} ${spec.name}] runs in the demo's own terminal, not in a pane of its own: ${why}`);
    return opts.fallback.start(spec, output);
  };

  return {
    async start(spec, output) {
      if (unusable !== undefined) return opts.fallback.start(spec, output);
      if (execPath === undefined) {
        unusable = "node's path holds a '=', which env(1) would take for a variable";
        return elsewhere(spec, output, `${unusable}; so do the agents after it`);
      }
      let link: AgentLink;
      try {
        link = await openLink(output.onLine);
      } catch (error) {
        return elsewhere(spec, output, `no socket for it: ${(error as Error).message}`);
      }
      listening.add(link);
      void link.connected.then(() => listening.delete(link));
      void link.closed.then(() => listening.delete(link));
      const variables = { ...demoVariables(env), ...spec.env, [ENV_LINK]: link.path, [ENV_LINK_KEY]: link.key };
      const argv = [
        envCommand,
        ...CREDENTIALS.flatMap((name) => ['-u', name]),
        ...Object.entries(variables).map(([name, value]) => `${name}=${value}`),
        execPath,
        opts.script,
        spec.role,
        spec.name,
        ...spec.flags,
      ];
      const opened = await opts.window.open(argv);
      if (!('pid' in opened)) {
        link.destroy();
        if ('noRoom' in opened) return elsewhere(spec, output, `no room for another pane in the window (${opened.noRoom})`);
        unusable = opened.error;
        return elsewhere(spec, output, `${opened.error}; so do the agents after it`);
      }
      return paneAgent(opened.pid, opened.paneId, link);
    },
    async close() {
      for (const link of listening) link.destroy();
      await opts.window.close();
      await opts.fallback.close();
    },
    closeSync() {
      for (const link of listening) link.removeSync();
      opts.window.closeSync();
      opts.fallback.closeSync();
    },
  };
}

function paneAgent(pid: number, pane: string, link: AgentLink): AgentProcess {
  let linked = false;
  let poll: NodeJS.Timeout | undefined;
  const exited = new Promise<string>((resolve) => {
    void link.closed.then(() => resolve(`in tmux pane ${pane}`));
    // Before it has reached the demo, only its pid says whether it still runs.
    poll = setInterval(() => {
      if (linked || isRunning(pid)) return;
      link.destroy();
      resolve(`in tmux pane ${pane}, before it reached the demo`);
    }, UNLINKED_POLL_MS);
    poll.unref();
  });
  void link.connected.then(() => {
    linked = true;
    clearInterval(poll);
  });
  void exited.then(() => clearInterval(poll));
  return {
    pid,
    pane,
    exited,
    end: () => link.end(),
    release: () => {
      clearInterval(poll);
      link.destroy();
    },
  };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) !== 'ESRCH';
  }
}

function demoVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (DEMO_VARIABLE.test(name) && value !== undefined) out[name] = value;
  return out;
}
