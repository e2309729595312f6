// One TCP connection with a bound in time, for the probes that only ask something and leave: the
// port probe's connect and the "answering" upgrade request. It resolves exactly once, with what
// `use` settles on, the bound's timeout or the abort; the socket, the timer and the abort listener
// are always released.
import net from 'node:net';

export interface ConnectEnds<T> {
  /** The answer when nothing settled within the bound. */
  readonly timeout: () => T;
  /** The answer when the signal aborts (before the connection too: then none is opened). */
  readonly aborted: () => T;
}

/**
 * Connects to host:port (a name goes through the system resolver) and hands the socket to `use`,
 * whose `settle` ends it with a result.
 */
export function boundedConnect<T>(
  host: string,
  port: number,
  boundMs: number,
  signal: AbortSignal | undefined,
  ends: ConnectEnds<T>,
  use: (socket: net.Socket, settle: (result: T) => void) => void,
): Promise<T> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(ends.aborted());
    const socket = net.connect({ host, port });
    let done = false;
    const settle = (result: T): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.removeAllListeners();
      socket.on('error', () => {}); // a late error after destroy must not become an uncaught one
      socket.destroy();
      resolve(result);
    };
    const onAbort = (): void => settle(ends.aborted());
    // After a stall of the event loop the timer and the socket's answer are both due, and timers
    // run first: give pending I/O one turn (setImmediate runs after it) before calling it a
    // timeout, or a refused port reads as "timeout" and a ghost flickers to unverified.
    const timer = setTimeout(() => setImmediate(() => settle(ends.timeout())), Math.max(0, boundMs));
    signal?.addEventListener('abort', onAbort, { once: true });
    use(socket, settle);
  });
}
