// A loopback port for a test: one the OS just handed out and nothing listens on any more.
import { createServer } from 'node:net';

/** A port on 127.0.0.1 nothing listens on right now (the OS picked it; it may be taken later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
