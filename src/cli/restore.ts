// `ghostwatch restore [ID]`: what evicting a file-backed session put in the trash, back where
// it was. Without an ID, the trash is listed, newest first. With one, the newest trashed file
// of that entry id (or that trash file name) goes back, never over a file that is there now;
// the restore is written to the audit log like an eviction.
import { formatOptions, parseArgs, UsageError, type OptionSpec } from './args.js';

export const RESTORE_OPTIONS: readonly OptionSpec[] = [{ name: 'help', type: 'boolean', description: 'show this help' }];

export function restoreUsage(): string {
  return [
    'ghostwatch restore — put a file that eviction moved to the trash back where it was',
    '',
    'Usage: ghostwatch restore [ID]',
    '',
    'Without ID: list the trash ($XDG_STATE_HOME/ghostwatch/trash), newest first.',
    'With ID (a session id, a claim, or a trash file name): restore the newest file for it.',
    'A file already at the original path is never overwritten.',
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
  const [{ defaultTrashDir, listTrash, restoreFromTrash }, { sanitize }, { AuditLog, defaultAuditLogPath, auditError }, { hostname, userInfo }] =
    await Promise.all([import('../sources/trash.js'), import('../core/sanitize.js'), import('../engine/audit-log.js'), import('node:os')]);
  const dir = defaultTrashDir();
  const items = await listTrash(dir);
  const wanted = positionals[0];

  if (wanted === undefined) {
    if (items.length === 0) {
      process.stdout.write(`the trash is empty (${dir})\n`);
      return 0;
    }
    process.stdout.write(`${items.length} in ${dir}, newest first:\n`);
    for (const i of items) {
      const missing = i.present ? '' : '  (file missing: only its note is left)';
      process.stdout.write(`  ${i.trashedAt}  ${sanitize(i.source, 20)} ${i.kind} ${sanitize(i.id, 80)}\n      was ${sanitize(i.originalPath, 200)}${missing}\n`);
    }
    process.stdout.write('ghostwatch restore ID puts one back.\n');
    return 0;
  }

  const matches = items.filter((i) => i.present && (i.id === wanted || i.trashName === wanted));
  const item = matches[0];
  if (!item) {
    process.stderr.write(`ghostwatch: nothing in the trash for "${sanitize(wanted, 80)}" (ghostwatch restore lists it)\n`);
    return 1;
  }
  const audit = new AuditLog(defaultAuditLogPath());
  const actor = `${userInfo().username}@${hostname()}`;
  try {
    await restoreFromTrash(item);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'EEXIST' ? `${item.originalPath} exists now; it was not overwritten` : `${code ?? (error as Error).message}`;
    process.stderr.write(`ghostwatch: cannot restore ${sanitize(wanted, 80)}: ${sanitize(why, 300)}\n`);
    return 1;
  }
  const record = { ts: new Date().toISOString(), kind: 'restore', actor, host: hostname(), source: item.source, entryKind: item.kind, entryId: item.id, from: item.trashPath, to: item.originalPath };
  const unaudited = await audit.append(record).then(() => undefined, (error: unknown) => auditError(error));
  process.stdout.write(`restored ${sanitize(item.originalPath, 200)}${matches.length > 1 ? ` (the newest of ${matches.length} trashed for this id)` : ''}\n`);
  if (unaudited) process.stderr.write(`ghostwatch: restored, but not written to the audit log (${audit.path}): ${unaudited}\n`);
  return 0;
}
