import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

// The UI renders state and owns none: it reaches the world only through the engine, and its
// colours are named by meaning in one place (theme.ts).
const dir = join(import.meta.dirname, '../../src/ui');
const files = readdirSync(dir, { recursive: true, encoding: 'utf8' })
  .filter((f) => /\.tsx?$/.test(f))
  .map((f) => relative(dir, join(dir, f)));
const code = (file: string) =>
  readFileSync(join(dir, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');

describe('src/ui layering', () => {
  it('has files to check', () => expect(files.length).toBeGreaterThan(10));

  it.each(files)('%s imports nothing from sources/, os/ or server/ (only through the engine)', (file) => {
    const imports = [...code(file).matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]!);
    for (const spec of imports) expect(spec, spec).not.toMatch(/(^|\/)(sources|os|server|cli)\//);
  });

  it.each(files.filter((f) => f !== 'theme.ts'))('%s names no colour: colours come from the theme', (file) => {
    const hues = /['"`](black|red|green|yellow|blue|magenta|cyan|white|gray|grey)(Bright)?['"`]|#[0-9a-fA-F]{3,6}\b|\b(rgb|hsl)\(/;
    expect(code(file)).not.toMatch(hues);
  });
});
