import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Issue 14: no source file over ~300 lines without a reason written at its top. The reason is a
// comment line "Over 300 lines because ..." before the first import or declaration.

const src = join(import.meta.dirname, '../../src');
const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => /\.tsx?$/.test(f));
const LIMIT = 310;

function reasonAtTop(text: string): boolean {
  for (const line of text.split('\n')) {
    if (line.startsWith('//')) {
      if (/^\/\/ Over 300 lines because \S/.test(line)) return true;
      continue;
    }
    if (line.trim() !== '') return false;
  }
  return false;
}

describe('source file size', () => {
  it('finds the files to check', () => {
    expect(files.length).toBeGreaterThan(100);
  });
  it.each(files)(`%s is at most ${LIMIT} lines (about 300) or says why at its top`, (file) => {
    const text = readFileSync(join(src, file), 'utf8');
    const lines = text.split('\n').length;
    if (lines > LIMIT) expect(reasonAtTop(text), `${file}: ${lines} lines and no "// Over 300 lines because ..." at its top`).toBe(true);
  });
  it('reads a reason only at the top', () => {
    expect(reasonAtTop('// what it is\n// Over 300 lines because it is one machine.\nimport x from "y";\n')).toBe(true);
    expect(reasonAtTop('// what it is\n\nimport x from "y";\n// Over 300 lines because it is one machine.\n')).toBe(false);
    expect(reasonAtTop('// Over 300 lines because\nconst a = 1;\n')).toBe(false);
  });
});
