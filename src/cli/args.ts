// A small declarative argument parser: each command names its options; anything else is
// one clear line and exit 2. No token is ever accepted as a flag value (argv is public in ps).
import { sanitize } from '../core/sanitize.js';

export type OptionType = 'boolean' | 'string' | 'number';

export interface OptionSpec {
  readonly name: string;
  readonly type: OptionType;
  readonly repeatable?: boolean;
  readonly description: string;
  readonly valueName?: string;
}

export type ParsedOptions = Record<string, string | number | boolean | string[] | undefined>;

/** A mistake in the command line: printed as one line, exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * What a failed command prints: a usage mistake as one line, anything else with its stack. Both
 * may quote the user's input, a file or a registry, so every line is sanitized: no escape
 * sequence, C1 control or bidi override reaches the terminal through an error.
 */
export function errorLines(error: unknown): string {
  if (error instanceof UsageError) return `ghostwatch: ${sanitize(error.message, 2000)}\n`;
  const text = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
  const lines = text.split('\n').map((line) => sanitize(line, 1000));
  return `ghostwatch: internal error: ${lines.join('\n')}\n`;
}

export function parseArgs(argv: readonly string[], specs: readonly OptionSpec[]): { options: ParsedOptions; positionals: string[] } {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const options: ParsedOptions = {};
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.replace(/^--?/, '').slice(0, eq === -1 ? undefined : eq - (arg.startsWith('--') ? 2 : 1));
    const spec = byName.get(name) ?? (name === 'h' ? byName.get('help') : undefined);
    if (!spec) throw new UsageError(`unknown option ${arg.slice(0, eq === -1 ? undefined : eq)}`);
    let value: string | undefined = eq === -1 ? undefined : arg.slice(eq + 1);
    if (spec.type === 'boolean') {
      if (value !== undefined) throw new UsageError(`--${spec.name} takes no value`);
      options[spec.name] = true;
      continue;
    }
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new UsageError(`--${spec.name} needs a value`);
    }
    const parsed = spec.type === 'number' ? parseNumber(spec.name, value) : value;
    if (spec.repeatable) {
      const before = options[spec.name];
      options[spec.name] = [...(Array.isArray(before) ? before : []), String(parsed)];
    } else {
      options[spec.name] = parsed;
    }
  }
  return { options, positionals };
}

function parseNumber(name: string, value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) {
    throw new UsageError(`--${name} needs a non-negative number, got "${value}"`);
  }
  return n;
}

export function formatOptions(specs: readonly OptionSpec[]): string {
  const rows = specs.map((s) => [`--${s.name}${s.type === 'boolean' ? '' : ` ${s.valueName ?? s.type.toUpperCase()}`}`, s.description]);
  const width = Math.max(...rows.map(([a]) => a!.length));
  return rows.map(([a, b]) => `  ${a!.padEnd(width)}  ${b}`).join('\n');
}
