// `ghostwatch check [--json | --format text|json|prometheus]`: one pass. Waits for every
// registry's first snapshot and one full probe of every local pid (bounded by --timeout), then
// reports. Exit 0 no problems, 1 problems, 2 error (a registry unreachable or refusing the token,
// bad arguments). On a registry error the report of what could be read is still printed.
import { formatOptions, UsageError, type OptionSpec } from './args.js';
import { commandOptions, MONITOR_OPTIONS, monitorSettings, REGISTRIES_HELP } from './settings.js';

export const CHECK_OPTIONS: readonly OptionSpec[] = [
  ...MONITOR_OPTIONS.filter((o) => o.name !== 'read-only'),
  { name: 'json', type: 'boolean', description: 'print one JSON object instead of the table (--format json)' },
  { name: 'format', type: 'string', valueName: 'FORMAT', description: "text (default), json, or prometheus: the text format node_exporter's textfile collector reads" },
  { name: 'timeout', type: 'number', valueName: 'SECONDS', description: 'longest wait for the registry and the first probe (default 10)' },
];

export function checkUsage(): string {
  return [
    'ghostwatch check — one pass: report every finding, exit 0 (no problems), 1 (problems) or 2 (error)',
    '',
    'Usage: ghostwatch check [--json | --format text|json|prometheus] [options]',
    '',
    'Options:',
    formatOptions(CHECK_OPTIONS),
    '',
    ...REGISTRIES_HELP,
    'The report starts with what was found and what was looked for and is not here.',
    '',
    'Examples:',
    '  ghostwatch check                            # every registry on this host',
    '  ghostwatch check --source claude            # Claude Code\'s session files only',
    '  ghostwatch check --json | jq \'.findings[] | select(.problem) | .id\'',
    '  ghostwatch check --registry ws://127.0.0.1:31415/ws --timeout 3 || notify-send "ghosts"',
    "  ghostwatch check --format prometheus        # for node_exporter's textfile collector (README: the cron line)",
  ].join('\n');
}

export const CHECK_FORMATS = ['text', 'json', 'prometheus'] as const;
export type CheckFormat = (typeof CHECK_FORMATS)[number];

/** --format, with --json as its old spelling of json; both naming different formats is a usage error. */
export function checkFormat(format: string | undefined, json: boolean): CheckFormat {
  const named = format === undefined ? undefined : CHECK_FORMATS.find((f) => f === format);
  if (format !== undefined && named === undefined) throw new UsageError(`--format must be one of ${CHECK_FORMATS.join(', ')}`);
  if (json && named !== undefined && named !== 'json') throw new UsageError(`--json and --format ${named} name two formats: give one`);
  return json ? 'json' : (named ?? 'text');
}

export async function checkCommand(argv: readonly string[]): Promise<number> {
  const options = commandOptions(argv, CHECK_OPTIONS, checkUsage);
  if (!options) return 0;
  const format = checkFormat(options.string('format'), options.flag('json'));
  const timeout = options.number('timeout') ?? 10;
  if (timeout <= 0 || timeout > 3600) throw new UsageError('--timeout needs a number of seconds from 0 to 3600');
  const settings = { ...monitorSettings(options), readOnly: true };
  const { buildEngine, reportOnce } = await import('./engine-setup.js');
  const engine = buildEngine(settings);
  engine.start();
  return reportOnce(engine, { timeoutMs: timeout * 1000, format, requireSettled: true, discovery: settings.discovery });
}
