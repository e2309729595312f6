// `npm run test:real-pi`: what Pi-DE and a real pi send each other through serve's /ws/agent/<id>
// proxy, and that every frame arrives whole. pi (from npm) runs in tmux with our extension (which
// serves Pi-DE as pi-socket does) and a fake model (fake-model.ts) that has it read an image; Pi-DE
// asks about it, attaches an image of its own, and opens the view again (init_state then holds the
// history). The largest frame of each kind is printed (and kept in last-run-frames.json beside the
// pi install): serve's proxy must carry frames this large, so it streams them instead of lowering
// its frame limit.
import { deflateSync, crc32 } from 'node:zlib';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { HAS_TMUX } from '../support/tmux.js';
import { modelsJson, PICTURE, startFakeModel, type FakeModel } from './fake-model.js';
import { installPi, PI_VERSION, PiInTmux, startServe, waitFor, type Serve } from './harness.js';

const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

/** A PNG of random pixels (it does not compress): `width`×`height` RGB, about 3 bytes a pixel. */
function noisePng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(body.length + 8);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), body.length + 4);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, no interlace
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let i = 0; i < rows.length; i++) rows[i] = i % (width * 3 + 1) === 0 ? 0 : (Math.random() * 256) | 0;
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

interface Seen {
  readonly type: string;
  readonly bytes: number;
}

/** A Pi-DE agent view through serve: every frame's type and size, and the frames themselves. */
async function openView(url: string): Promise<{ ws: WebSocket; frames: { type: string; bytes: number; frame: Record<string, unknown> }[]; sent: Seen[]; send(text: string): void }> {
  const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 64 * 1024 * 1024 });
  const frames: { type: string; bytes: number; frame: Record<string, unknown> }[] = [];
  const sent: Seen[] = [];
  ws.on('message', (data: Buffer) => {
    const frame = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
    frames.push({ type: String(frame.type ?? frame.error ?? '?'), bytes: data.length, frame });
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const send = (text: string): void => {
    const parsed = (() => {
      try {
        return JSON.parse(text) as { type?: string };
      } catch {
        return {};
      }
    })();
    sent.push({ type: parsed.type ?? 'prompt', bytes: Buffer.byteLength(text) });
    ws.send(text);
  };
  return { ws, frames, sent, send };
}

/** The assistant's last message of a turn ended (it stopped, rather than calling a tool). */
function turnEnded(frames: { type: string; frame: Record<string, unknown> }[], after: number): boolean {
  return frames.slice(after).some((f) => {
    const message = f.frame.message as { role?: string; stopReason?: string } | undefined;
    return f.type === 'message_end' && message?.role === 'assistant' && message.stopReason === 'stop';
  });
}

function largest(seen: readonly Seen[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of seen) out[s.type] = Math.max(out[s.type] ?? 0, s.bytes);
  return out;
}

describe.runIf(HAS_TMUX || IN_CI)(`Pi-DE and real pi ${PI_VERSION} through serve's agent proxy`, () => {
  let bin = '';
  let serve: Serve | undefined;
  let model: FakeModel | undefined;
  let pi: PiInTmux | undefined;
  const report: Record<string, unknown> = { piVersion: PI_VERSION };

  beforeAll(async () => {
    if (!HAS_TMUX) throw new Error('the real-pi tests need tmux (CI is set, so they fail instead of skipping)');
    bin = await installPi();
    model = await startFakeModel();
    serve = await startServe();
  }, 360_000);

  afterAll(async () => {
    if (pi && !report.largestFrameToPiDe) {
      report.screen = pi.screen();
      report.trace = pi.trace().filter((l) => l.step !== 'sent' || Number(l.to) > 0).slice(-30);
      report.modelRequests = model?.requests;
    }
    pi?.stop();
    await serve?.stop();
    await model?.close();
    pi?.removeFiles();
    const text = JSON.stringify(report, null, 2);
    writeFileSync(join(tmpdir(), `ghostwatch-real-pi-${PI_VERSION}`, 'last-run-frames.json'), `${text}\n`);
    console.log(`what Pi-DE and pi sent each other through serve:\n${text}`);
  });

  it('relays every frame whole, both ways: an image pi read, an image Pi-DE attached, the history on reconnect', { timeout: 180_000 }, async () => {
    pi = new PiInTmux(bin, serve!.url, ['--provider', 'fake', '--model', 'fake-1']);
    mkdirSync(join(pi.home, 'agent'), { recursive: true });
    writeFileSync(join(pi.home, 'agent', 'models.json'), modelsJson(model!.baseUrl));
    await pi.start();
    // ~3 MB each: under pi's 4.5 MB limit for an inline image, so pi passes them on as they are.
    writeFileSync(join(pi.cwd, PICTURE), noisePng(1000, 1000));
    const attached = noisePng(900, 900);
    const viewUrl = `${serve!.url}/agent/${encodeURIComponent(pi.nodeId)}`;

    const view = await openView(viewUrl);
    await waitFor('init_state', () => view.frames.find((f) => f.type === 'init_state'), 15_000);
    view.send(`What is in ${PICTURE}?`);
    await waitFor('the answer about the picture', () => turnEnded(view.frames, 0) || undefined, 60_000);
    const mark = view.frames.length;
    view.send(JSON.stringify({ type: 'attach_file', filename: 'shot.png', content: attached.toString('base64'), mimeType: 'image/png' }));
    await waitFor('the answer after the attachment', () => turnEnded(view.frames, mark) || undefined, 60_000);
    view.ws.close();

    const again = await openView(viewUrl);
    const history = await waitFor('init_state with the history', () => again.frames.find((f) => f.type === 'init_state'), 15_000);
    again.ws.close();

    // What the extension sent to a connected Pi-DE, and received, is what Pi-DE got and sent: whole frames, in order.
    const trace = pi.trace();
    const sentByPi = trace.filter((l) => l.step === 'sent' && Number(l.to) > 0).map((l) => ({ type: String(l.type), bytes: Number(l.bytes) }));
    const gotByPiDe = [...view.frames, ...again.frames].map((f) => ({ type: f.type === 'attach_file_ack' ? 'attach_file_ack' : f.type, bytes: f.bytes }));
    expect(gotByPiDe.filter((f) => f.type !== 'attach_file_ack')).toEqual(sentByPi);
    const receivedByPi = trace.filter((l) => l.step === 'received').map((l) => ({ type: String(l.type), bytes: Number(l.bytes) }));
    expect(receivedByPi).toEqual(view.sent);

    const toPiDe = largest(gotByPiDe);
    const toPi = largest(view.sent);
    report.largestFrameToPiDe = toPiDe;
    report.largestFrameToPi = toPi;
    report.framesToPiDe = gotByPiDe.length;
    report.initStateWithHistory = history.bytes;
    report.modelRequests = model!.requests;
    // pi's own frames carry the images whole: well over 1 MiB.
    expect(Math.max(...Object.values(toPiDe))).toBeGreaterThan(4 * 1024 * 1024);
    expect(toPi.attach_file).toBeGreaterThan(3 * 1024 * 1024);
  });
});
