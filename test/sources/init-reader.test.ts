// The one-shot init reader of `ghostwatch status`, against real sockets: a real ws server and
// a raw TCP server that writes frames byte by byte as the protocol allows.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readInitSnapshot } from '../../src/sources/hypivisor/init-reader.js';
import { startRegistryServer } from '../../src/server/index.js';
import { node, startScriptedRegistry } from '../support/scripted-registry.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

const SWITCHING = 'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: x\r\n\r\n';

/** A raw server: answers the upgrade (with `answer`, a whole response head), then writes the given frames in tiny pieces. */
async function raw(frames: Buffer[], answer = SWITCHING): Promise<string> {
  const server: Server = createServer((sock) => {
    sock.once('data', () => {
      sock.write(answer);
      if (answer !== SWITCHING) return void sock.end();
      const all = Buffer.concat(frames);
      for (let i = 0; i < all.length; i += 7) sock.write(all.subarray(i, i + 7));
    });
    sock.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => server.close(r)));
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws`;
}

function frame(opcode: number, payload: Buffer, fin = true): Buffer {
  const len = payload.length;
  const head = len < 126 ? Buffer.from([(fin ? 0x80 : 0) | opcode, len]) : len < 65536 ? Buffer.from([(fin ? 0x80 : 0) | opcode, 126, len >> 8, len & 255]) : (() => {
    const h = Buffer.alloc(10);
    h[0] = (fin ? 0x80 : 0) | opcode;
    h[1] = 127;
    h.writeBigUInt64BE(BigInt(len), 2);
    return h;
  })();
  return Buffer.concat([head, payload]);
}

describe('readInitSnapshot', () => {
  it('reads the init of a real ghostwatch serve, claims included', async () => {
    const s = await startRegistryServer({ port: 0, log: () => {} });
    closers.push(() => s.close());
    const init = await readInitSnapshot({ url: s.url, timeoutMs: 1000 });
    expect(init).toEqual({ nodes: [], claims: [] });
  });

  it('reassembles fragments, 16- and 64-bit lengths, and skips pings', async () => {
    const nodes = Array.from({ length: 1500 }, (_, i) => node(`n${i}`));
    const text = Buffer.from(JSON.stringify({ event: 'init', protocol_version: '1', nodes }));
    expect(text.length).toBeGreaterThan(65_536);
    const half = Math.floor(text.length / 2);
    const url = await raw([frame(0x9, Buffer.from('hi')), frame(0x1, text.subarray(0, 100), false), frame(0x0, text.subarray(100, half), false), frame(0x0, text.subarray(half))]);
    const init = await readInitSnapshot({ url, timeoutMs: 2000 });
    expect(init.nodes).toHaveLength(1500);
    expect(init.claims).toBeUndefined();
  });

  it('says why it failed: 401, nothing listening, silence, an oversize frame', async () => {
    const refusing = await startScriptedRegistry({ refuse: 401 });
    closers.push(() => refusing.close());
    await expect(readInitSnapshot({ url: refusing.url, token: 'x', timeoutMs: 1000 })).rejects.toThrow('the registry refused the token (HTTP 401)');
    await expect(readInitSnapshot({ url: 'ws://127.0.0.1:9/ws', timeoutMs: 1000 })).rejects.toThrow(/nothing listens/);
    const silent = await raw([]);
    await expect(readInitSnapshot({ url: silent, timeoutMs: 200 })).rejects.toThrow('no answer within 200 ms');
    const big = await raw([frame(0x1, Buffer.alloc(5000, 0x20))]);
    await expect(readInitSnapshot({ url: big, timeoutMs: 1000, maxPayload: 1024 })).rejects.toThrow(/larger than the max payload/);
  });

  it('names the HTTP status of an answer that is not an upgrade, and a connection closed before any answer', async () => {
    const notFound = await raw([], 'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n');
    await expect(readInitSnapshot({ url: notFound, timeoutMs: 1000 })).rejects.toThrow('the registry answered HTTP 404 instead of a WebSocket');
    const hangUp = await raw([], '');
    await expect(readInitSnapshot({ url: hangUp, timeoutMs: 1000 })).rejects.toThrow('socket hang up');
  });

  it('reads over wss:// with the CA it is given, by host name and by address, and refuses a certificate it cannot verify', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-init-tls-'));
    closers.push(async () => rmSync(dir, { recursive: true, force: true }));
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
    const server = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) });
    const paths: string[] = [];
    const sockets = new Set<{ destroy(): void }>();
    server.on('secureConnection', (tls) => sockets.add(tls));
    server.on('upgrade', (req, sock) => {
      paths.push(req.url ?? '');
      sock.write(SWITCHING);
      sock.write(frame(0x1, Buffer.from(JSON.stringify({ event: 'init', protocol_version: '1', nodes: [node('over-tls')] }))));
      sock.on('error', () => {});
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => new Promise((r) => {
      server.close(r);
      for (const sock of sockets) sock.destroy();
    }));
    const port = (server.address() as AddressInfo).port;
    const ca = readFileSync(cert);
    for (const host of ['localhost', '127.0.0.1']) {
      const init = await readInitSnapshot({ url: `wss://${host}:${port}/ws`, token: 't', ca, timeoutMs: 2000 });
      expect(init.nodes).toHaveLength(1);
    }
    expect(paths).toEqual(['/ws?token=t', '/ws?token=t']);
    await expect(readInitSnapshot({ url: `wss://localhost:${port}/ws`, timeoutMs: 2000 })).rejects.toThrow(/self[- ]signed certificate/);
  });

  it('sends the token percent-encoded, like the full client', async () => {
    const r = await startScriptedRegistry();
    closers.push(() => r.close());
    await readInitSnapshot({ url: r.url, token: 'a b&c', timeoutMs: 1000 });
    expect(r.upgrades[0]).toBe('/ws?token=a%20b%26c');
  });
});
