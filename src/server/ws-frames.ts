// The little of RFC 6455 framing the agent proxy needs to relay a WebSocket as bytes: where each
// frame starts and ends in a stream, so the stream passes through unchanged and serve writes a
// frame of its own (a ping, a close) only between two of its frames; each frame's length, against
// the frame limit; the code of a close frame and the pongs. And the few frames serve writes itself.
import { randomBytes } from 'node:crypto';

export const OP_TEXT = 0x1;
export const OP_CLOSE = 0x8;
export const OP_PING = 0x9;
export const OP_PONG = 0xa;

/** What a stream of frames said, as it went by. */
export type FrameNotice = { readonly kind: 'close'; readonly code: number; readonly reason: string } | { readonly kind: 'pong' } | { readonly kind: 'too-big'; readonly length: number };

/** A control frame's payload (at most 125 bytes), collected to read its code. */
interface Control {
  readonly opcode: number;
  readonly mask: Buffer | undefined;
  readonly payload: Buffer;
  got: number;
}

/** The header's length, from its second byte: 2, plus 2 or 8 for a longer length, plus 4 for a mask. */
function headerLength(second: number): number {
  const len7 = second & 0x7f;
  return 2 + (len7 === 126 ? 2 : len7 === 127 ? 8 : 0) + (second & 0x80 ? 4 : 0);
}

/** Follows the frames of one direction of a WebSocket connection, chunk by chunk. */
export class FrameCursor {
  private readonly header = Buffer.alloc(14);
  private have = 0;
  /** Payload bytes of the current frame still to come. */
  private remaining = 0;
  private control: Control | undefined;
  /** A frame over the limit was seen: nothing after it is read. */
  private broken = false;
  /** The cut before that frame fell between two frames (its header began in the chunk that had it). */
  private cleanCut = false;

  constructor(private readonly maxPayload: number) {}

  /** Every frame passed so far is whole: a frame of our own may be written now. */
  get atBoundary(): boolean {
    return this.broken ? this.cleanCut : this.have === 0 && this.remaining === 0;
  }

  /**
   * Reads one chunk. `cut` is where a frame over the limit begins: only what comes before it may
   * be passed on, and nothing after (the cursor reads no more).
   */
  feed(chunk: Buffer): { notices: FrameNotice[]; cut?: number } {
    const notices: FrameNotice[] = [];
    if (this.broken) return { notices, cut: 0 };
    let headerStart = this.have === 0 ? 0 : -1;
    let i = 0;
    while (i < chunk.length) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, chunk.length - i);
        if (this.control) {
          chunk.copy(this.control.payload, this.control.got, i, i + take);
          this.control.got += take;
        }
        i += take;
        this.remaining -= take;
        if (this.remaining === 0) this.endControl(notices);
        continue;
      }
      if (this.have === 0) headerStart = i;
      this.header[this.have++] = chunk[i++]!;
      if (this.have < 2 || this.have < headerLength(this.header[1]!)) continue;
      const length = this.payloadLength();
      const masked = (this.header[1]! & 0x80) !== 0;
      const opcode = this.header[0]! & 0x0f;
      const mask = masked ? Buffer.from(this.header.subarray(this.have - 4, this.have)) : undefined;
      this.have = 0;
      if (length > this.maxPayload || (opcode >= 0x8 && length > 125)) {
        this.broken = true;
        this.cleanCut = headerStart >= 0;
        notices.push({ kind: 'too-big', length });
        return { notices, cut: Math.max(headerStart, 0) };
      }
      this.control = opcode >= 0x8 ? { opcode, mask, payload: Buffer.alloc(length), got: 0 } : undefined;
      this.remaining = length;
      if (length === 0) this.endControl(notices);
    }
    return { notices };
  }

  private payloadLength(): number {
    const len7 = this.header[1]! & 0x7f;
    if (len7 < 126) return len7;
    if (len7 === 126) return this.header.readUInt16BE(2);
    const long = this.header.readBigUInt64BE(2);
    return long > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(long);
  }

  private endControl(notices: FrameNotice[]): void {
    const control = this.control;
    this.control = undefined;
    if (!control) return;
    const payload = control.payload;
    if (control.mask) for (let k = 0; k < payload.length; k++) payload[k]! ^= control.mask[k % 4]!;
    if (control.opcode === OP_PONG) notices.push({ kind: 'pong' });
    else if (control.opcode === OP_CLOSE) {
      notices.push({ kind: 'close', code: payload.length >= 2 ? payload.readUInt16BE(0) : 1005, reason: payload.subarray(2).toString('utf8') });
    }
  }
}

/** One whole frame as serve writes it: unmasked toward a client (Pi-DE), masked toward a server (the agent). */
function frame(opcode: number, payload: Buffer, masked: boolean): Buffer {
  const ext = payload.length < 126 ? 0 : payload.length < 65_536 ? 2 : 8;
  const head = Buffer.alloc(2 + ext + (masked ? 4 : 0));
  head[0] = 0x80 | opcode;
  head[1] = (masked ? 0x80 : 0) | (ext === 0 ? payload.length : ext === 2 ? 126 : 127);
  if (ext === 2) head.writeUInt16BE(payload.length, 2);
  if (ext === 8) head.writeBigUInt64BE(BigInt(payload.length), 2);
  if (!masked) return Buffer.concat([head, payload]);
  const mask = randomBytes(4);
  mask.copy(head, 2 + ext);
  const body = Buffer.from(payload);
  for (let k = 0; k < body.length; k++) body[k]! ^= mask[k % 4]!;
  return Buffer.concat([head, body]);
}

/** A close frame's payload: the code, and as much of the reason as fits in 123 bytes. */
function closePayload(code: number, reason: string): Buffer {
  let text = Buffer.from(reason, 'utf8');
  if (text.length > 123) text = Buffer.from(text.subarray(0, 123).toString('utf8').replace(/\uFFFD$/, ''), 'utf8');
  const out = Buffer.alloc(2 + text.length);
  out.writeUInt16BE(code, 0);
  text.copy(out, 2);
  return out;
}

export function textFrameToClient(text: string): Buffer {
  return frame(OP_TEXT, Buffer.from(text, 'utf8'), false);
}

/** Text frames toward a client, one per payload, as one buffer: what goes on the wire for them. */
export function textFramesToClient(payloads: readonly Buffer[]): Buffer {
  return Buffer.concat(payloads.map((p) => frame(OP_TEXT, p, false)));
}

export function closeFrameToClient(code: number, reason = ''): Buffer {
  return frame(OP_CLOSE, closePayload(code, reason), false);
}

export function closeFrameToServer(code: number, reason = ''): Buffer {
  return frame(OP_CLOSE, closePayload(code, reason), true);
}

export function pingFrameToClient(): Buffer {
  return frame(OP_PING, Buffer.alloc(0), false);
}
