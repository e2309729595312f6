import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// src/core decides every verdict; it must stay a pure function of its inputs.
const dir = join(import.meta.dirname, '../../src/core');
const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));

describe('src/core purity', () => {
  it.each(files)('%s imports only from src/core', (file) => {
    const text = readFileSync(join(dir, file), 'utf8');
    const imports = [...text.matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]);
    for (const spec of imports) expect(spec).toMatch(/^\.\/[\w-]+\.js$/);
  });
  it.each(files)('%s reads no clock and touches no process', (file) => {
    const text = readFileSync(join(dir, file), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
    expect(text).not.toMatch(/Date\.now|new Date\(|performance\.|process\.|require\(|Math\.random|setTimeout|setInterval/);
  });
});
