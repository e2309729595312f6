// A fake OpenAI-compatible chat completions API on 127.0.0.1 for the real-pi tests, as pi's
// `openai-completions` provider talks to it (a custom provider in models.json): every
// POST .../chat/completions is answered as server-sent events. A turn that follows a tool result
// answers REPLY_CHUNKS pieces of text, so pi streams a message of some length; any other asks for
// one tool call, `read` of PICTURE (an image in pi's cwd). (pi sends an image a tool returned as a
// user message right after the tool's message.) Each request's size is remembered for the report.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export const PICTURE = 'picture.png';
export const REPLY_CHUNKS = 200;

export interface FakeModel {
  /** http://127.0.0.1:<port>/v1: the provider's baseUrl. */
  readonly baseUrl: string;
  /** Bytes of each request body, in order. */
  readonly requests: number[];
  close(): Promise<void>;
}

function chunk(res: ServerResponse, choice: Record<string, unknown>): void {
  res.write(`data: ${JSON.stringify({ id: 'fake', object: 'chat.completion.chunk', created: 0, model: 'fake-1', choices: [{ index: 0, ...choice }] })}\n\n`);
}

function answer(res: ServerResponse, afterTool: boolean): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (afterTool) {
    chunk(res, { delta: { role: 'assistant', content: '' }, finish_reason: null });
    for (let i = 0; i < REPLY_CHUNKS; i++) chunk(res, { delta: { content: `The picture is noise, part ${i} of the answer. ` }, finish_reason: null });
    chunk(res, { delta: {}, finish_reason: 'stop' });
  } else {
    const call = { index: 0, id: 'call_1', type: 'function', function: { name: 'read', arguments: '' } };
    chunk(res, { delta: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: null });
    chunk(res, { delta: { tool_calls: [{ index: 0, function: { arguments: JSON.stringify({ path: PICTURE }) } }] }, finish_reason: null });
    chunk(res, { delta: {}, finish_reason: 'tool_calls' });
  }
  res.write(`data: ${JSON.stringify({ id: 'fake', object: 'chat.completion.chunk', created: 0, model: 'fake-1', choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })}\n\n`);
  res.end('data: [DONE]\n\n');
}

export function startFakeModel(): Promise<FakeModel> {
  const requests: number[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404).end();
        return;
      }
      requests.push(body.length);
      let messages: { role?: string }[] = [];
      try {
        messages = (JSON.parse(body.toString('utf8')) as { messages?: { role?: string }[] }).messages ?? [];
      } catch {
        // answered as a first turn
      }
      answer(res, messages.slice(-2).some((m) => m.role === 'tool'));
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ baseUrl: `http://127.0.0.1:${port}/v1`, requests, close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

/** models.json for pi: the fake as provider `fake`, model `fake-1`, which takes images. */
export function modelsJson(baseUrl: string): string {
  return JSON.stringify({
    providers: {
      fake: {
        baseUrl,
        api: 'openai-completions',
        apiKey: 'fake-key',
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [{ id: 'fake-1', name: 'Fake', reasoning: false, input: ['text', 'image'], contextWindow: 1_000_000, maxTokens: 32_000 }],
      },
    },
  });
}
