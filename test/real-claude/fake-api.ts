// A fake Anthropic Messages API on 127.0.0.1 for the real-Claude tests (protocols.md §4): every
// POST /v1/messages is answered "ok", as server-sent events when the request asks for a stream
// (message_start, content_block_start, content_block_delta, content_block_stop, message_delta,
// message_stop) and as one JSON message otherwise; count_tokens answers 1. Anything else is a
// 404. Each request is remembered (method, path, whether it streamed, the model) for the report.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export interface ApiRequest {
  readonly at: number;
  readonly method: string;
  readonly path: string;
  readonly stream: boolean;
  readonly model: string | undefined;
}

export interface FakeApi {
  /** http://127.0.0.1:<port>: the value of ANTHROPIC_BASE_URL. */
  readonly url: string;
  readonly requests: ApiRequest[];
  close(): Promise<void>;
}

/** The reply text, so a test can wait for it on the screen. */
export const REPLY = 'ok from the fake API';

function event(res: ServerResponse, type: string, data: Record<string, unknown>): void {
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

function answer(res: ServerResponse, model: string, stream: boolean): void {
  const usage = { input_tokens: 1, output_tokens: 1 };
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ id: 'msg_fake', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: REPLY }], stop_reason: 'end_turn', stop_sequence: null, usage }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  event(res, 'message_start', { message: { id: 'msg_fake', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } });
  event(res, 'content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
  event(res, 'content_block_delta', { index: 0, delta: { type: 'text_delta', text: REPLY } });
  event(res, 'content_block_stop', { index: 0 });
  event(res, 'message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } });
  event(res, 'message_stop', {});
  res.end();
}

export function startFakeApi(): Promise<FakeApi> {
  const requests: ApiRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body: { stream?: unknown; model?: unknown } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        // not JSON: answered by path alone
      }
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      const model = typeof body.model === 'string' ? body.model : undefined;
      requests.push({ at: Date.now(), method: req.method ?? '', path, stream: body.stream === true, model });
      if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"input_tokens":1}');
      } else if (req.method === 'POST' && path === '/v1/messages') {
        answer(res, model ?? 'claude-fake', body.stream === true);
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"type":"error","error":{"type":"not_found_error","message":"not here"}}');
      }
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
