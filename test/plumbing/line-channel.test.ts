import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/plumbing/line-channel.js';

describe('LineSplitter', () => {
  it('hands whole lines in order, holding a line split across chunks until its newline', () => {
    const lines = new LineSplitter(100);
    const seen: string[] = [];
    expect(lines.push('a\nb', (l) => void seen.push(l))).toBe(true);
    expect(seen).toEqual(['a']);
    expect(lines.push('c\n\nd\n', (l) => void seen.push(l))).toBe(true);
    expect(seen).toEqual(['a', 'bc', '', 'd']);
  });

  it('stops where the reader says so and keeps the rest for the next chunk', () => {
    const lines = new LineSplitter(100);
    const seen: string[] = [];
    lines.push('one\ntwo\nthree\n', (l) => {
      seen.push(l);
      return l !== 'one';
    });
    expect(seen).toEqual(['one']);
    lines.push('', (l) => void seen.push(l));
    expect(seen).toEqual(['one', 'two', 'three']);
  });

  it('says when the unterminated rest is past the cap, and forgets it on clear', () => {
    const lines = new LineSplitter(4);
    const seen: string[] = [];
    expect(lines.push('1234', (l) => void seen.push(l))).toBe(true);
    expect(lines.push('5', (l) => void seen.push(l))).toBe(false);
    lines.clear();
    expect(lines.push('ok\n', (l) => void seen.push(l))).toBe(true);
    expect(seen).toEqual(['ok']);
  });

  it('caps a line, not a chunk: many short lines in one chunk are read', () => {
    const lines = new LineSplitter(4);
    const seen: string[] = [];
    expect(lines.push('ab\n'.repeat(10), (l) => void seen.push(l))).toBe(true);
    expect(seen).toHaveLength(10);
  });
});
