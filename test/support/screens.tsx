// The screens `npm run screenshots` renders and the screenshot test checks: real frames of the
// real App over the real reconcile of a fixed registry, at a fixed clock.
import chalk from 'chalk';
import { render } from 'ink-testing-library';
import { App } from '../../src/ui/app.js';
import { ansiToSvg } from './svg.js';
import { firstFrame, typeKeys } from './ink-keys.js';
import { costsEngine, downEngine, eventsEngine, FIXED_NOW, fleetEngine, leftoverEngine, multiSourceEngine, StaticEngine } from './ui-fixtures.js';

// Local times in the frames (the detail view, "since 12:03:04"): one zone wherever they are rendered.
process.env.TZ = 'UTC';

export interface Screen {
  readonly name: string;
  readonly title: string;
  readonly columns: number;
  readonly rows: number;
  /** Keys typed before the frame is taken. */
  readonly keys: readonly string[];
  readonly color?: boolean;
  /** The registries shown; default the hypivisor demo alone. */
  readonly engine?: () => StaticEngine;
}

export const SCREENS: readonly Screen[] = [
  { name: 'main-120x30', title: 'ghostwatch: the findings table, problems first', columns: 120, rows: 30, keys: [] },
  { name: 'narrow-60x15', title: 'ghostwatch in a 60x15 tmux pane: columns dropped by priority', columns: 60, rows: 15, keys: [] },
  { name: 'confirm-120x30', title: 'ghostwatch: X asks before evicting every problem', columns: 120, rows: 30, keys: ['X'] },
  { name: 'confirm-force-100x24', title: 'ghostwatch: evicting a live entry needs a second answer', columns: 100, rows: 24, keys: ['G', 'k', 'k', ' ', 'g', ' ', 'd', 'y'] },
  { name: 'detail-120x30', title: 'ghostwatch: the evidence behind a verdict', columns: 120, rows: 30, keys: ['j', 'j', '\r'] },
  { name: 'events-100x24', title: 'ghostwatch: e shows what happened, newest first, instead of logs', columns: 100, rows: 24, keys: ['e'], engine: eventsEngine },
  { name: 'help-100x30', title: 'ghostwatch: the help overlay, from the keymap', columns: 100, rows: 30, keys: ['?'] },
  { name: 'help-80x24', title: 'ghostwatch: the help at 80x24, grouped by the view a key works in', columns: 80, rows: 24, keys: ['?'] },
  { name: 'wide-200x50', title: 'ghostwatch at 200x50: the spare width goes first to what would be cut', columns: 200, rows: 50, keys: [], engine: () => multiSourceEngine({ agentctlDown: false }) },
  { name: 'claims-100x20', title: 'ghostwatch: claims and locks', columns: 100, rows: 20, keys: ['\t'] },
  { name: 'no-color-80x24', title: 'ghostwatch with NO_COLOR: markers carry the verdicts', columns: 80, rows: 24, keys: [], color: false },
  { name: 'sources-120x34', title: 'ghostwatch over hypivisor, agentctl (daemon down) and Claude Code files: one state line each', columns: 120, rows: 34, keys: [], engine: () => multiSourceEngine({ agentctlDown: true }) },
  { name: 'claims-sources-140x24', title: 'ghostwatch: locks and claims of agentctl, hypivisor and a claim manager, one tab', columns: 140, rows: 24, keys: ['\t'], engine: () => multiSourceEngine({ agentctlDown: false }) },
  { name: 'confirm-sources-120x30', title: 'ghostwatch: the confirm dialog says what each registry does on eviction', columns: 120, rows: 30, keys: ['X'], engine: () => multiSourceEngine({ agentctlDown: false }) },
  { name: 'down-120x30', title: 'ghostwatch: the registry refuses the token; its last known rows stay, stale (~), not evictable', columns: 120, rows: 30, keys: [], engine: () => downEngine({ cause: 'token refused (401)', status: 'auth-refused', kept: true, lastError: 'the registry refused the token (HTTP 401); check HYPI_TOKEN or --token-file' }) },
  { name: 'down-empty-100x16', title: 'ghostwatch: nothing listens at the registry address: "not connected", never "no sessions"', columns: 100, rows: 16, keys: [], engine: () => downEngine({ cause: 'connection refused', status: 'unreachable', kept: false, lastError: 'nothing listens at the registry address (connect ECONNREFUSED 127.0.0.1:31415)' }) },
  { name: 'costs-200x50', title: 'ghostwatch: what each agent costs (CPU%, MEM), one stopped with Ctrl-Z (suspended), one not answering', columns: 200, rows: 50, keys: [], engine: costsEngine },
  { name: 'costs-80x24', title: 'ghostwatch at 80x24: CPU% and MEM dropped first, the suspended rows after the problems', columns: 80, rows: 24, keys: [], engine: costsEngine },
  { name: 'suspended-detail-120x30', title: 'ghostwatch: a suspended agent, since when, the way out, and what it costs', columns: 120, rows: 30, keys: ['j', '\r'], engine: costsEngine },
  { name: 'down-80x24', title: 'ghostwatch at 80x24 with the registry gone: "not connected since" first, no count it cannot know', columns: 80, rows: 24, keys: [], engine: () => downEngine({ cause: 'connection refused', status: 'unreachable', kept: true, lastError: 'nothing listens at the registry address (connect ECONNREFUSED 127.0.0.1:31415)' }) },
  { name: 'evict-ssh-80x24', title: 'ghostwatch at 80x24: the evict dialog wraps a remote ghost\'s reason, host and pid, never cuts them', columns: 80, rows: 24, keys: ['d'], engine: fleetEngine },
  { name: 'evict-ssh-60x15', title: 'ghostwatch at 60x15: the evict dialog still says all of it, wrapped', columns: 60, rows: 15, keys: ['d'], engine: fleetEngine },
  { name: 'evict-ssh-200x50', title: 'ghostwatch at 200x50: the evict dialog of a ghost verified over ssh', columns: 200, rows: 50, keys: ['d'], engine: fleetEngine },
  { name: 'help-60x15', title: 'ghostwatch: the help at 60x15, grouped by view', columns: 60, rows: 15, keys: ['?'] },
  { name: 'help-200x50', title: 'ghostwatch: the help at 200x50, grouped by view', columns: 200, rows: 50, keys: ['?'] },
  { name: 'down-60x15', title: 'ghostwatch at 60x15 with the registry gone: "not connected since" and why, before the address', columns: 60, rows: 15, keys: [], engine: () => downEngine({ cause: 'connection refused', status: 'unreachable', kept: true, lastError: 'nothing listens at the registry address (connect ECONNREFUSED 127.0.0.1:31415)' }) },
  { name: 'down-200x50', title: 'ghostwatch at 200x50 with the registry gone: the address, since when and why, no count it cannot know', columns: 200, rows: 50, keys: [], engine: () => downEngine({ cause: 'connection refused', status: 'unreachable', kept: true, lastError: 'nothing listens at the registry address (connect ECONNREFUSED 127.0.0.1:31415)' }) },
  { name: 'fleet-120x30', title: 'ghostwatch over ssh: build-42 judged on its own facts, gpu-7 down and build-99 under another name unverified', columns: 120, rows: 30, keys: [], engine: fleetEngine },
  { name: 'leftovers-80x24', title: 'ghostwatch: a dead agent left a dev server on :3000 and a test watcher; LEFT says so', columns: 80, rows: 24, keys: [], engine: leftoverEngine },
  { name: 'leftovers-confirm-80x24', title: "ghostwatch: K asks before ending a dead agent's leftovers, naming each process", columns: 80, rows: 24, keys: ['K'], engine: leftoverEngine },
  { name: 'leftovers-200x50', title: 'ghostwatch: leftovers under a ghost, and an agent gone from its registry whose browser still runs', columns: 200, rows: 50, keys: [], engine: leftoverEngine },
  { name: 'leftovers-confirm-200x50', title: "ghostwatch as root: K on two marked rows; one process is another user's, and the dialog says so", columns: 200, rows: 50, keys: [' ', '/', 'swept', '\r', ' ', 'K'], engine: () => leftoverEngine({ otherUser: true }) },
  { name: 'leftovers-detail-120x30', title: 'ghostwatch: the detail view lists what the dead agent left running', columns: 120, rows: 30, keys: ['\r'], engine: leftoverEngine },
];

export async function renderScreen(screen: Screen): Promise<string> {
  const level = chalk.level;
  chalk.level = screen.color === false ? 0 : 1;
  try {
    const engine = screen.engine?.() ?? new StaticEngine();
    const size = { columns: screen.columns, rows: screen.rows };
    const r = render(<App engine={engine} now={() => FIXED_NOW} home="/home/ana" size={size} onQuit={() => {}} />);
    await firstFrame(r);
    await typeKeys(r, screen.keys);
    const frame = r.lastFrame() ?? '';
    r.unmount();
    return ansiToSvg(frame, screen.columns, screen.rows, screen.title);
  } finally {
    chalk.level = level;
  }
}
