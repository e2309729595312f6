// A Claude Code session record (`sessions/<pid>.json`) as real Claude Code writes it
// (protocols.md §4): the fields of 2.1.197, which 2.1.332 keeps. A test overrides or adds what it
// is about (2.1.332's pidDomain, tmux, messagingSocketPath); a field given as undefined is left out.
export function claudeRecord(pid: number, sessionId: string, fields: Record<string, unknown> = {}, now = Date.now()): Record<string, unknown> {
  return {
    pid,
    sessionId,
    cwd: '/tmp/p2',
    startedAt: now - 60_000,
    procStart: '97090',
    version: '2.1.197',
    peerProtocol: 1,
    kind: 'interactive',
    entrypoint: 'cli',
    name: 'p2-e2',
    nameSource: 'derived',
    status: 'idle',
    updatedAt: now - 30_000,
    statusUpdatedAt: now - 30_000,
    ...fields,
  };
}
