// Real things for the remote port check tests: TCP servers on loopback addresses that are not
// this host's name (127.0.0.2...), ports that refuse, and a listener whose accept queue is full
// (its process never accepts: SYNs are dropped, so a connect times out for real).
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { killAndReap } from '../support/processes.js';

export interface CountingServer {
  readonly host: string;
  readonly port: number;
  /** Connections accepted so far. */
  accepts: number;
  close(): Promise<void>;
}

export async function countingServer(host = '127.0.0.2'): Promise<CountingServer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    out.accepts++;
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const out: CountingServer = {
    host,
    port: (server.address() as net.AddressInfo).port,
    accepts: 0,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  return out;
}

/** A port on `host` that refuses: bound, then closed. */
export async function refusedPort(host = '127.0.0.2'): Promise<number> {
  const s = await countingServer(host);
  await s.close();
  return s.port;
}

/**
 * Ports on `host` whose accept queues are full: a child process listens (backlog 1) and blocks
 * forever without accepting; each queue is filled with one held connection. Further connects
 * get no answer (the kernel drops their SYNs) and time out.
 */
export async function stuckPorts(count: number, host = '127.0.0.3'): Promise<{ ports: number[]; close(): Promise<void> }> {
  const program = `
    const net = require('node:net');
    const ports = [];
    let left = ${count};
    for (let i = 0; i < ${count}; i++) {
      const s = net.createServer();
      s.listen({ port: 0, host: ${JSON.stringify(host)}, backlog: 1 }, () => {
        ports.push(s.address().port);
        if (--left === 0) {
          process.stdout.write(ports.join(',') + '\\n', () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0));
        }
      });
    }`;
  const child: ChildProcess = spawn(process.execPath, ['-e', program], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.includes('\n')) resolve(text.trim());
    });
    child.once('exit', () => reject(new Error('the stuck listener exited')));
  });
  const ports = line.split(',').map(Number);
  const held: net.Socket[] = [];
  // Fill each queue: connect until one gets no answer within 300 ms.
  for (const port of ports) {
    for (let i = 0; i < 16; i++) {
      const s = net.connect({ host, port });
      s.on('error', () => {});
      held.push(s);
      const connected = await new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(false), 300);
        s.once('connect', () => {
          clearTimeout(t);
          resolve(true);
        });
      });
      if (!connected) break;
    }
  }
  return {
    ports,
    close: async () => {
      for (const s of held) s.destroy();
      await killAndReap(child);
    },
  };
}
