import { describe, expect, it } from 'vitest';
import { LineSplitter, ReplyFifo } from '../../src/plumbing/line-channel.js';

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

  it('pushBounds hands each line as its bounds in the text, the held rest included, without cutting it out', () => {
    const lines = new LineSplitter(100);
    const seen: string[] = [];
    const firsts: string[] = [];
    const read = (text: string, from: number, to: number): void => {
      firsts.push(text.charAt(from));
      seen.push(text.slice(from, to));
    };
    expect(lines.pushBounds('+a\nb', read)).toBe(true);
    expect(lines.pushBounds('c\n+d\n', read)).toBe(true);
    expect(seen).toEqual(['+a', 'bc', '+d']);
    expect(firsts).toEqual(['+', 'b', '+']);
  });

  it('caps a line, not a chunk: many short lines in one chunk are read', () => {
    const lines = new LineSplitter(4);
    const seen: string[] = [];
    expect(lines.push('ab\n'.repeat(10), (l) => void seen.push(l))).toBe(true);
    expect(seen).toHaveLength(10);
  });
});

describe('ReplyFifo', () => {
  /** A hand-driven clock's timers: fire(ms) runs those armed for that long and still armed. */
  function timers() {
    const armed = new Map<number, { fn: () => void; ms: number }>();
    let next = 0;
    return {
      clock: {
        setTimeout: (fn: () => void, ms: number) => (armed.set(++next, { fn, ms }), next),
        clearTimeout: (h: unknown) => void armed.delete(h as number),
      },
      armed: () => armed.size,
      fire: (ms: number) => [...armed].filter(([, t]) => t.ms === ms).forEach(([h, t]) => (armed.delete(h), t.fn())),
    };
  }

  it('answers the oldest request first, disarming its deadline', () => {
    const t = timers();
    const fifo = new ReplyFifo<string>(t.clock);
    fifo.push('a', 100, () => undefined);
    fifo.push('b', 100, () => undefined);
    expect(fifo.head).toBe('a');
    expect(fifo.shift()).toBe('a');
    expect(fifo.head).toBe('b');
    expect(t.armed()).toBe(1);
    expect(fifo.shift()).toBe('b');
    expect(fifo.shift()).toBeUndefined();
    expect(t.armed()).toBe(0);
  });

  it('tells a missed deadline, and drains every waiting request when the channel ends', () => {
    const t = timers();
    const fifo = new ReplyFifo<string>(t.clock);
    const missed: string[] = [];
    fifo.push('slow', 50, () => missed.push('slow'));
    fifo.push('later', 80, () => missed.push('later'));
    t.fire(50);
    expect(missed).toEqual(['slow']);
    expect(fifo.drain()).toEqual(['slow', 'later']);
    expect(t.armed()).toBe(0);
    expect(fifo.head).toBeUndefined();
  });
});
