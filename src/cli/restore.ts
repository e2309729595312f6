// `ghostwatch restore [ID]`: what evicting a file-backed session put in the trash, back where
// it was. Without an ID, the trash is listed, newest first. With one, the newest trash entry of
// that entry id (or that trash name) goes back whole (a Claude record with its key files), never
// over a file that is there now; the restore is written to the audit log like an eviction.
import { formatOptions, parseArgs, UsageError, type OptionSpec } from './args.js';

export const RESTORE_OPTIONS: readonly OptionSpec[] = [{ name: 'help', type: 'boolean', description: 'show this help' }];

export function restoreUsage(): string {
  return [
    'ghostwatch restore — put a file that eviction moved to the trash back where it was',
    '',
    'Usage: ghostwatch restore [ID]',
    '',
    'Without ID: list the trash ($XDG_STATE_HOME/ghostwatch/trash), newest first.',
    'With ID (a session id, a claim, or a trash name): restore the newest entry for it,',
    'every file of it (a Claude session file with its key files).',
    'A file already at an original path is never overwritten: then nothing is restored.',
    '',
    'Options:',
    formatOptions(RESTORE_OPTIONS),
    '',
    'Examples:',
    '  ghostwatch restore',
    '  ghostwatch restore 5f0c2d7e-1b2a-4c3d-9e8f-0a1b2c3d4e5f',
  ].join('\n');
}

export async function restoreCommand(argv: readonly string[]): Promise<number> {
  const { options, positionals } = parseArgs(argv, RESTORE_OPTIONS);
  if (options.help) {
    process.stdout.write(`${restoreUsage()}\n`);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`restore takes one ID, got ${positionals.length}`);
  const [{ checkTrashDir, defaultTrashDir, listTrash, restoreFromTrash, RestoreConflict }, { sanitize }, { AuditLog, defaultAuditLogPath, auditError }, { fsErrorText }, { hostname, userInfo }, { randomUUID }] =
    await Promise.all([
      import('../sources/trash.js'),
      import('../core/sanitize.js'),
      import('../engine/audit-log.js'),
      import('../os/safe-file.js'),
      import('node:os'),
      import('node:crypto'),
    ]);
  const say = (stream: NodeJS.WriteStream, line: string): void => void stream.write(`ghostwatch: ${sanitize(line, 400)}\n`);
  const dir = defaultTrashDir();
  let items: Awaited<ReturnType<typeof listTrash>>;
  try {
    for (const w of await checkTrashDir(dir)) say(process.stderr, `warning: ${w}`);
    items = await listTrash(dir, (line) => say(process.stderr, `warning: ${line}`));
  } catch (error) {
    say(process.stderr, `cannot read the trash: ${fsErrorText(error)}`);
    return 1;
  }
  const wanted = positionals[0];

  if (wanted === undefined) {
    if (items.length === 0) {
      process.stdout.write(`the trash is empty (${sanitize(dir, 200)})\n`);
      return 0;
    }
    process.stdout.write(`${items.length} in ${sanitize(dir, 200)}, newest first:\n`);
    for (const i of items) {
      const missing = i.present ? '' : '  (file missing: only its note is left)';
      const along = i.entryFiles.slice(1).map((f) => `\n      and ${sanitize(f.originalPath, 200)}${f.present ? '' : '  (missing)'}`).join('');
      process.stdout.write(`  ${sanitize(i.trashedAt, 40)}  ${sanitize(i.source, 20)} ${sanitize(i.kind, 10)} ${sanitize(i.id, 80)}\n      was ${sanitize(i.originalPath, 200)}${missing}${along}\n`);
    }
    process.stdout.write('ghostwatch restore ID puts one back.\n');
    return 0;
  }

  const matches = items.filter((i) => i.present && (i.id === wanted || i.trashName === wanted));
  const item = matches[0];
  if (!item) {
    say(process.stderr, `nothing in the trash for "${sanitize(wanted, 80)}" (ghostwatch restore lists it)`);
    return 1;
  }
  const audit = new AuditLog(defaultAuditLogPath(), { warn: (line) => say(process.stderr, `warning: ${line}`) });
  const host = hostname();
  const actor = `${userInfo().username}@${host}`;
  // Like an eviction: the intent is on disk before anything moves, and the outcome follows it.
  const id = randomUUID();
  const intent = { ts: new Date().toISOString(), kind: 'restore', id, actor, host, source: item.source, entryKind: item.kind, entryId: item.id, from: item.trashPath, to: item.originalPath };
  try {
    await audit.append(intent);
  } catch (error) {
    say(process.stderr, `cannot restore ${sanitize(wanted, 80)}: the audit log (${audit.path}) cannot be written, so nothing was moved: ${auditError(error)}`);
    return 1;
  }
  const outcome = (result: string, detail?: string): Promise<string | undefined> =>
    audit.append({ ts: new Date().toISOString(), kind: 'outcome', id, outcome: result, ...(detail ? { detail } : {}) }).then(
      () => undefined,
      (error: unknown) => auditError(error),
    );
  let restored: string[];
  try {
    restored = await restoreFromTrash(item);
  } catch (error) {
    const why = error instanceof RestoreConflict ? `${error.message} (the entry stays in the trash)` : fsErrorText(error);
    const unaudited = await outcome('failed', why);
    say(process.stderr, `cannot restore ${sanitize(wanted, 80)}: ${why}`);
    if (unaudited) say(process.stderr, `and its outcome is not in the audit log (${audit.path}): ${unaudited}`);
    return 1;
  }
  const unaudited = await outcome('restored', restored.length > 1 ? `put back ${restored.join(', ')}` : undefined);
  const along = restored.slice(1).map((p) => ` and ${sanitize(p, 200)}`).join('');
  process.stdout.write(`restored ${sanitize(item.originalPath, 200)}${along}${matches.length > 1 ? ` (the newest of ${matches.length} trashed for this id)` : ''}\n`);
  if (unaudited) say(process.stderr, `restored, but its outcome is not in the audit log (${audit.path}): ${unaudited}`);
  return 0;
}
