import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';

// src/core decides every verdict; it must stay a pure function of its inputs. Its rules live in
// subfolders (src/core/rules): every file, at any depth, is held to the same.
const dir = join(import.meta.dirname, '../../src/core');
const files = (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).sort();

describe('src/core purity', () => {
  it('looks at the rules too', () => {
    expect(files).toContain(join('rules', 'identity.ts'));
  });
  it.each(files)('%s imports only from src/core', (file) => {
    const text = readFileSync(join(dir, file), 'utf8');
    const imports = [...text.matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]!);
    for (const spec of imports) {
      expect(spec).toMatch(/^\.\.?\/[\w/.-]+\.js$/);
      const target = relative(dir, resolve(dirname(join(dir, file)), spec));
      expect(target.startsWith('..'), `${file} imports ${spec}, outside src/core`).toBe(false);
    }
  });
  it.each(files)('%s reads no clock and touches no process', (file) => {
    const text = readFileSync(join(dir, file), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    expect(text).not.toMatch(/Date\.now|new Date\(|performance\.|process\.|require\(|Math\.random|setTimeout|setInterval/);
  });
});
