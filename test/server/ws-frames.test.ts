// The frame boundaries the agent proxy follows while it relays bytes (ws-frames.ts): whatever way
// a stream is cut into chunks, the same notices, the same boundaries, and a frame over the limit
// is cut before its first byte.
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { closeFrameToClient, closeFrameToServer, FrameCursor, pingFrameToClient, textFrameToClient, type FrameNotice } from '../../src/server/ws-frames.js';

/** A frame as a client sends it: FIN, the opcode, the shortest length form, masked. */
function clientFrame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x80 | opcode, 0x80 | len]) : Buffer.alloc(len < 65_536 ? 4 : 10);
  if (len >= 126) {
    head[0] = 0x80 | opcode;
    head[1] = 0x80 | (len < 65_536 ? 126 : 127);
    if (len < 65_536) head.writeUInt16BE(len, 2);
    else head.writeBigUInt64BE(BigInt(len), 2);
  }
  const mask = randomBytes(4);
  return Buffer.concat([head, mask, Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!))]);
}

function pong(): Buffer {
  return clientFrame(0xa, Buffer.alloc(0));
}

/** Feeds `stream` in the chunks that start at `cuts`; the notices, and whether each chunk ended between frames. */
function follow(stream: Buffer, cuts: readonly number[], max = 1 << 24): { notices: FrameNotice[]; boundaries: boolean[]; cut?: number } {
  const cursor = new FrameCursor(max);
  const notices: FrameNotice[] = [];
  const boundaries: boolean[] = [];
  const starts = [0, ...cuts, stream.length];
  for (let k = 0; k + 1 < starts.length; k++) {
    const got = cursor.feed(stream.subarray(starts[k], starts[k + 1]));
    notices.push(...got.notices);
    boundaries.push(cursor.atBoundary);
    if (got.cut !== undefined) return { notices, boundaries, cut: starts[k]! + got.cut };
  }
  return { notices, boundaries };
}

describe('FrameCursor', () => {
  const frames = [
    clientFrame(0x1, Buffer.from('hello')),
    pong(),
    clientFrame(0x2, Buffer.alloc(300, 7)), // a 16-bit length
    clientFrame(0x2, Buffer.alloc(70_000, 8)), // a 64-bit length
    clientFrame(0x8, Buffer.concat([Buffer.from([0x0f, 0xa2]), Buffer.from('tab closed')])), // 4002
  ];
  const stream = Buffer.concat(frames);
  const expected: FrameNotice[] = [{ kind: 'pong' }, { kind: 'close', code: 4002, reason: 'tab closed' }];

  it('sees the pong and the close code of a masked stream however it is cut in two', () => {
    for (let at = 1; at < stream.length; at += at < 400 ? 1 : 997) {
      expect(follow(stream, [at]).notices, `cut at ${at}`).toEqual(expected);
    }
  });

  it('is between frames exactly where a frame ends, byte by byte', () => {
    const ends = new Set<number>();
    let end = 0;
    for (const f of frames.slice(0, 3)) ends.add((end += f.length));
    const head = Buffer.concat(frames.slice(0, 3));
    const { boundaries, notices } = follow(head, Array.from({ length: head.length - 1 }, (_, i) => i + 1));
    expect(boundaries.map((b, i) => (b ? i + 1 : -1)).filter((i) => i > 0)).toEqual([...ends]);
    expect(notices).toEqual([{ kind: 'pong' }]);
  });

  it('cuts before a frame over the limit, between frames when its header is in the chunk', () => {
    const small = clientFrame(0x1, Buffer.from('ok'));
    const big = clientFrame(0x2, Buffer.alloc(2000));
    const got = follow(Buffer.concat([small, big]), [], 1000);
    expect(got).toMatchObject({ cut: small.length, notices: [{ kind: 'too-big', length: 2000 }] });
    const cursor = new FrameCursor(1000);
    cursor.feed(Buffer.concat([small, big.subarray(0, 1)])); // the big frame's header begins here
    expect(cursor.feed(big.subarray(1))).toMatchObject({ cut: 0 });
    expect(cursor.atBoundary).toBe(false); // its first byte went out: nothing of ours can follow
  });

  it('takes a control frame over 125 bytes for one over the limit', () => {
    expect(follow(clientFrame(0x9, Buffer.alloc(126)), []).notices).toEqual([{ kind: 'too-big', length: 126 }]);
  });
});

describe('the frames serve writes', () => {
  it('are frames ws reads: a text, a close with its reason cut to 123 bytes, a ping; masked toward a server', () => {
    const toClient = Buffer.concat([textFrameToClient('{"error":"x"}'), pingFrameToClient(), closeFrameToClient(1014, 'é'.repeat(100))]);
    const cursor = new FrameCursor(1 << 20);
    expect(cursor.feed(toClient).notices).toEqual([{ kind: 'close', code: 1014, reason: 'é'.repeat(61) }]);
    expect(cursor.atBoundary).toBe(true);
    const masked = closeFrameToServer(1001, 'bye');
    expect(masked[1]! & 0x80).toBe(0x80);
    expect(new FrameCursor(1 << 20).feed(masked).notices).toEqual([{ kind: 'close', code: 1001, reason: 'bye' }]);
  });
});
