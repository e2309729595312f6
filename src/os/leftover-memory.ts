// What agents started, kept between runs in $XDG_STATE_HOME/ghostwatch/descendants.json: a `check`
// or `reap` from cron learns the trees of the agents alive at its run, and the next run, after an
// agent died, still knows what it left behind. Read only when it is ours (readOwnFileSync: not a
// symlink, our uid, writable by nobody else, in a folder likewise) and of this boot (start ticks
// count from boot); anything else is ignored with one line. Written atomically. Every process it
// names is checked again (its exact start) before it is shown or signalled: the file only says
// where to look.
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sanitize } from '../core/sanitize.js';
import { MAX_AGENTS_REMEMBERED, MAX_REMEMBERED_PER_AGENT, type AgentMemory, type AgentRef, type ProcessIdentity, type RememberedProcess } from '../core/leftovers.js';
import { fsErrorText, readOwnFileSync, writeFileAtomicSync } from './safe-file.js';
import { ghostwatchStateDir } from './state-dir.js';

const MAX_BYTES = 8 * 1024 * 1024;

export function defaultLeftoverMemoryPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(ghostwatchStateDir(env), 'descendants.json');
}

/** This boot's id (Linux); undefined elsewhere, where the file is not kept. */
export function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

export interface LeftoverMemoryStore {
  load(): { agents: AgentMemory[]; warning?: string };
  /** Undefined when written, else why not (one line). */
  save(agents: readonly AgentMemory[]): string | undefined;
}

export function leftoverMemoryFile(path: string, boot: string | undefined = bootId()): LeftoverMemoryStore {
  return {
    load: () => loadMemory(path, boot),
    save: (agents) => saveMemory(path, boot, agents),
  };
}

function loadMemory(path: string, boot: string | undefined): { agents: AgentMemory[]; warning?: string } {
  if (boot === undefined) return { agents: [] };
  let text: string;
  try {
    text = readOwnFileSync(path, MAX_BYTES).toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { agents: [] };
    return { agents: [], warning: ignored(path, fsErrorText(err)) };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { agents: [], warning: ignored(path, 'not valid JSON') };
  }
  const o = raw as { version?: unknown; boot?: unknown; agents?: unknown } | null;
  if (typeof o !== 'object' || o === null || o.version !== 1 || !Array.isArray(o.agents)) return { agents: [], warning: ignored(path, 'not a file ghostwatch wrote') };
  // Another boot's ticks name other processes: that memory is simply over.
  if (o.boot !== boot) return { agents: [] };
  const agents = o.agents.slice(0, MAX_AGENTS_REMEMBERED).map(parseAgent).filter((a): a is AgentMemory => a !== undefined);
  return { agents };
}

function ignored(path: string, why: string): string {
  return sanitize(`the memory of agents' processes ${path} was not used: ${why}`, 300);
}

const isPid = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v > 1 && v <= 0x7fffffff;
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const text = (v: unknown, max: number): string | undefined => (typeof v === 'string' ? v.slice(0, max) : undefined);

function parseIdentity(v: unknown): ProcessIdentity | undefined {
  const o = v as { pid?: unknown; startTicks?: unknown; startedAt?: unknown } | null;
  if (typeof o !== 'object' || o === null || !isPid(o.pid) || !isCount(o.startTicks)) return undefined;
  return { pid: o.pid, startTicks: o.startTicks, startedAt: typeof o.startedAt === 'number' && Number.isFinite(o.startedAt) ? o.startedAt : undefined };
}

function parseAgent(v: unknown): AgentMemory | undefined {
  const o = v as { agent?: unknown; refs?: unknown; descendants?: unknown } | null;
  if (typeof o !== 'object' || o === null) return undefined;
  const agent = parseIdentity(o.agent);
  if (!agent || !Array.isArray(o.refs) || !Array.isArray(o.descendants)) return undefined;
  const refs: AgentRef[] = [];
  for (const r of o.refs.slice(0, 8) as { source?: unknown; id?: unknown; machine?: unknown; cwd?: unknown }[]) {
    const source = text(r?.source, 256);
    const id = text(r?.id, 1024);
    if (source !== undefined && id !== undefined) refs.push({ source, id, machine: text(r.machine, 256), cwd: text(r.cwd, 4096) });
  }
  const descendants: RememberedProcess[] = [];
  for (const d of o.descendants.slice(0, MAX_REMEMBERED_PER_AGENT) as { ppid?: unknown; name?: unknown }[]) {
    const id = parseIdentity(d);
    if (id && typeof d.ppid === 'number' && Number.isInteger(d.ppid)) descendants.push({ ...id, ppid: d.ppid, name: text(d.name, 64) ?? '?' });
  }
  return { agent, refs, descendants };
}

function saveMemory(path: string, boot: string | undefined, agents: readonly AgentMemory[]): string | undefined {
  if (boot === undefined) return undefined;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileAtomicSync(path, `${JSON.stringify({ version: 1, boot, agents })}\n`);
    return undefined;
  } catch (err) {
    return sanitize(`the memory of agents' processes was not kept (${path}): ${fsErrorText(err)}`, 300);
  }
}
