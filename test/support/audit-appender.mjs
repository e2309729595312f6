// A ghostwatch process appending to an audit log, as a second pane or a cron `reap` does while
// the monitor runs: argv is the log's path, a tag, how many lines and how long each is. Each line
// is a few KiB, so it reaches the file a page at a time. Run from the built dist/.
const { AuditLog } = await import(new URL('../../dist/src/engine/audit-log.js', import.meta.url).href);

const [path, tag, count, length] = process.argv.slice(2);
const log = new AuditLog(path, { warn: (line) => process.stderr.write(`${line}\n`) });
const pad = 'x'.repeat(Number(length));
for (let i = 0; i < Number(count); i++) await log.append({ kind: 'intent', tag, i, pad });
