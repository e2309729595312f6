// Listening TCP sockets from /proc/net/tcp and /proc/net/tcp6: which addresses a port is bound
// on, and the socket inode that port-owner.ts maps to a pid. The files show the sockets of the
// reader's network namespace.
import { close, open, read } from 'node:fs';
import { endianness } from 'node:os';
import { errorCode, errorText } from './liveness.js';

export type AddressFamily = 4 | 6;
export type ByteOrder = 'LE' | 'BE';

export interface ListeningSocket {
  readonly port: number;
  /** Printable: IPv4 dotted quad, IPv6 compressed (RFC 5952, IPv4-mapped as ::ffff:a.b.c.d). */
  readonly address: string;
  readonly family: AddressFamily;
  /** The socket's inode: /proc/<pid>/fd/* of a holder reads "socket:[inode]". 0 when no file holds it. */
  readonly inode: number;
  /** The uid that owns the socket. */
  readonly uid: number;
}

export interface ProcNetParse {
  readonly sockets: ListeningSocket[];
  /** Lines that are neither the header, blank, nor a well-formed row (skipped). */
  readonly malformed: number;
}

export type ListeningSocketsResult =
  | { readonly ok: true; readonly byPort: Map<number, ListeningSocket[]>; readonly malformed: number }
  | { readonly ok: false; readonly unavailable: string };

const LISTEN = '0A';
const SL = /^\d+:$/;
const HEX2 = /^[0-9A-Fa-f]{2}$/;
const DECIMAL = /^\d{1,15}$/;
const ENDPOINT: Record<AddressFamily, RegExp> = {
  4: /^([0-9A-Fa-f]{8}):([0-9A-Fa-f]{4})$/,
  6: /^([0-9A-Fa-f]{32}):([0-9A-Fa-f]{4})$/,
};
const HOST_ORDER: ByteOrder = endianness();

/**
 * The network-order bytes of an address as the kernel prints it: each 32-bit word with %08X of
 * its host-endian value, so on little-endian hosts every word's bytes appear reversed.
 */
function addressBytes(hex: string, order: ByteOrder): number[] {
  const bytes: number[] = [];
  for (let w = 0; w < hex.length; w += 8) {
    const word = [0, 2, 4, 6].map((i) => parseInt(hex.slice(w + i, w + i + 2), 16));
    bytes.push(...(order === 'LE' ? word.reverse() : word));
  }
  return bytes;
}

function ipv6Text(bytes: readonly number[]): string {
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i] as number) << 8) | (bytes[2 * i + 1] as number));
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `::ffff:${bytes.slice(12).join('.')}`;
  }
  // The longest run of two or more zero groups becomes "::" (the first one on a tie).
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (gs: number[]): string => gs.map((g) => g.toString(16)).join(':');
  if (best < 0) return hex(groups);
  return `${hex(groups.slice(0, best))}::${hex(groups.slice(best + bestLen))}`;
}

/** A printable address from the kernel's hex (8 digits for IPv4, 32 for IPv6); undefined when malformed. */
export function decodeProcNetAddress(hex: string, family: AddressFamily, order: ByteOrder = HOST_ORDER): string | undefined {
  if (!/^[0-9A-Fa-f]*$/.test(hex) || hex.length !== (family === 4 ? 8 : 32)) return undefined;
  const bytes = addressBytes(hex, order);
  return family === 4 ? bytes.join('.') : ipv6Text(bytes);
}

/**
 * The LISTEN rows (state 0A) of /proc/net/tcp (family 4) or /proc/net/tcp6 (family 6).
 * Never throws: a line that does not parse is skipped and counted in `malformed`.
 */
export function parseProcNetTcp(input: string | Uint8Array, family: AddressFamily, order: ByteOrder = HOST_ORDER): ProcNetParse {
  const text = typeof input === 'string' ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString('latin1');
  const sockets: ListeningSocket[] = [];
  let malformed = 0;
  for (const line of text.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f[0] === '' || f[0] === 'sl') continue;
    // sl local remote st tx:rx tr:when retrnsmt uid timeout inode ...
    const local = ENDPOINT[family].exec(f[1] ?? '');
    const state = f[3] ?? '';
    if (f.length < 10 || !SL.test(f[0] ?? '') || !local || !ENDPOINT[family].test(f[2] ?? '') || !HEX2.test(state)) {
      malformed++;
      continue;
    }
    if (state.toUpperCase() !== LISTEN) continue;
    const uid = f[7] ?? '';
    const inode = f[9] ?? '';
    const port = parseInt(local[2] as string, 16);
    const address = decodeProcNetAddress(local[1] as string, family, order);
    if (!DECIMAL.test(uid) || !DECIMAL.test(inode) || port === 0 || address === undefined) {
      malformed++;
      continue;
    }
    sockets.push({ port, address, family, inode: Number(inode), uid: Number(uid) });
  }
  return { sockets, malformed };
}

/** Where the tables are read from; tests point it at fixture files. */
export interface ProcNetPaths {
  readonly tcp: string;
  readonly tcp6: string;
}

export const PROC_NET_PATHS: ProcNetPaths = { tcp: '/proc/net/tcp', tcp6: '/proc/net/tcp6' };

/**
 * The listening sockets on `ports`, from one read of each table. Every requested usable port
 * is in the map (an empty list when nothing listens on it). A missing tcp6 (IPv6 disabled)
 * is not an error; a missing tcp, or a tcp6 that is there but unreadable, is: then the result
 * says why it is unavailable.
 */
export async function listeningSockets(
  ports: readonly number[],
  paths: ProcNetPaths = PROC_NET_PATHS,
): Promise<ListeningSocketsResult> {
  if (paths === PROC_NET_PATHS && process.platform !== 'linux') {
    return { ok: false, unavailable: `listening sockets need Linux /proc/net/tcp (this is ${process.platform})` };
  }
  const [v4, v6] = await Promise.all([readOrError(paths.tcp), readOrError(paths.tcp6)]);
  try {
    return tablesRead(ports, paths, v4, v6);
  } finally {
    for (const t of [v4, v6]) if (isLent(t)) t.release();
  }
}

/** Every listening socket of both tables, whatever its port (what a process listens on); unavailable as listeningSockets says. */
export async function allListeningSockets(paths: ProcNetPaths = PROC_NET_PATHS): Promise<{ readonly ok: true; readonly sockets: ListeningSocket[] } | { readonly ok: false; readonly unavailable: string }> {
  if (paths === PROC_NET_PATHS && process.platform !== 'linux') {
    return { ok: false, unavailable: `listening sockets need Linux /proc/net/tcp (this is ${process.platform})` };
  }
  const [v4, v6] = await Promise.all([readOrError(paths.tcp), readOrError(paths.tcp6)]);
  try {
    const read = tablesRead([], paths, v4, v6, true);
    return read.ok ? { ok: true, sockets: [...read.byPort.values()].flat() } : read;
  } finally {
    for (const t of [v4, v6]) if (isLent(t)) t.release();
  }
}

const isLent = (v: unknown): v is Lent => typeof v === 'object' && v !== null && (v as Partial<Lent>).bytes instanceof Uint8Array;

function tablesRead(ports: readonly number[], paths: ProcNetPaths, v4: unknown, v6: unknown, everyPort = false): ListeningSocketsResult {
  if (!isLent(v4)) {
    return { ok: false, unavailable: `cannot read ${paths.tcp} (${errorCode(v4) ?? errorText(v4)})` };
  }
  // No tcp6 at all means no IPv6 in this kernel; any other failure would hide IPv6 listeners.
  if (!isLent(v6) && errorCode(v6) !== 'ENOENT') {
    return { ok: false, unavailable: `cannot read ${paths.tcp6} (${errorCode(v6) ?? errorText(v6)})` };
  }
  const wanted = new Set(ports.filter((p) => Number.isInteger(p) && p > 0 && p < 65536));
  const byPort = new Map<number, ListeningSocket[]>([...wanted].map((p) => [p, []]));
  const parses = [parseProcNetTcp(v4.bytes, 4)];
  if (isLent(v6)) parses.push(parseProcNetTcp(v6.bytes, 6));
  let malformed = 0;
  for (const parse of parses) {
    malformed += parse.malformed;
    for (const s of parse.sockets) {
      const list = byPort.get(s.port);
      if (list) list.push(s);
      else if (everyPort) byPort.set(s.port, [s]);
    }
  }
  return { ok: true, byPort, malformed };
}

/** A table's bytes, lent: give them back (release) once parsed. */
interface Lent {
  readonly bytes: Uint8Array;
  release(): void;
}

/** Read buffers kept between rounds: at most two (the two tables), each at most KEEP_BYTES. */
const spare: Buffer[] = [];
const FIRST_BYTES = 64 * 1024;
const KEEP_BYTES = 1024 * 1024;

/**
 * A file's bytes, or the error that kept it from being read. Read into a buffer kept from the last
 * round: readFile reads a /proc file (which says its size is 0) in fresh 64 KiB chunks and joins
 * them, ~130 KB of garbage per table per round, which piled up to megabytes of memory between two
 * collections (bench rss_10k). Through node:fs's callbacks: loading node:fs/promises (and the
 * readline and stream modules it pulls in) is ~3 ms of a status line.
 */
function readOrError(path: string): Promise<Lent | unknown> {
  return new Promise((resolve) => {
    open(path, 'r', (openError, fd) => {
      if (openError) return resolve(openError);
      let buf = spare.pop() ?? Buffer.allocUnsafe(FIRST_BYTES);
      let at = 0;
      const release = (): void => {
        if (buf.length <= KEEP_BYTES && spare.length < 2) spare.push(buf);
      };
      const next = (): void =>
        read(fd, buf, at, buf.length - at, null, (readError, n) => {
          if (readError || n === 0) {
            close(fd, () => {
              if (!readError) return resolve({ bytes: buf.subarray(0, at), release });
              release();
              resolve(readError);
            });
            return;
          }
          at += n;
          if (at === buf.length) {
            const bigger = Buffer.allocUnsafe(buf.length * 2);
            buf.copy(bigger, 0, 0, at);
            buf = bigger;
          }
          next();
        });
      next();
    });
  });
}
