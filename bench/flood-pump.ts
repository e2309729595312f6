// Sends one frame over and over, as fast as a WebSocket's socket takes it. One turn sends at most
// a few frames past `cap` unsent: once the peer resets the connection the socket is destroyed, a
// send adds nothing to `bufferedAmount` any more, and a loop "while under cap" would never end
// (seen: 413,608 sends in 3 s on a destroyed socket), nor would the close that ends the pump run.
import type { WebSocket } from 'ws';

export function pumpFrames(ws: WebSocket, frame: Buffer, cap: number, pauseMs = 20): void {
  const burst = Math.ceil((2 * cap) / frame.length);
  const pump = (): void => {
    if (ws.readyState !== ws.OPEN) return;
    for (let n = 0; n < burst && ws.bufferedAmount < cap; n++) ws.send(frame, { binary: true });
    // Still under the cap: the peer reads as fast (or is gone, and the close comes next turn).
    if (ws.bufferedAmount < cap) setImmediate(pump);
    else setTimeout(pump, pauseMs);
  };
  pump();
}
