// Small loopback servers that misbehave on purpose, one behaviour each, plus a well-behaved SGLang-shaped
// SSE server. All bind 127.0.0.1 on port 0 and count the TCP connections they accept.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeSelfSignedCert } from '../helpers/tls.js';

export interface TestServer {
  url: string;
  port: number;
  /** TCP connections accepted so far. */
  connections: number;
  /** Requests seen so far, with their Authorization header (secret checks). */
  requests: Array<{
    method: string;
    path: string;
    authorization?: string;
    requestId?: string;
    body: string;
  }>;
  close(): Promise<void>;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

function track(server: http.Server | https.Server, scheme: 'http' | 'https'): Promise<TestServer> {
  const sockets = new Set<Socket>();
  const ts: TestServer = {
    url: '',
    port: 0,
    connections: 0,
    requests: [],
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  server.on(scheme === 'https' ? 'secureConnection' : 'connection', (s: Socket) => {
    ts.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      ts.port = (server.address() as AddressInfo).port;
      ts.url = `${scheme}://127.0.0.1:${ts.port}`;
      resolve(ts);
    });
  });
}

function withBody(handler: Handler, ts: () => TestServer): http.RequestListener {
  return (req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString('utf8');
      const auth = req.headers.authorization;
      const requestId = req.headers['x-request-id'] as string | undefined;
      ts().requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: auth,
        requestId,
        body,
      });
      handler(req, res, body);
    });
  };
}

export async function startServer(handler: Handler): Promise<TestServer> {
  const server = http.createServer(withBody(handler, () => ts));
  // Node's default 5 s keep-alive would close the reused connection between slow test steps.
  server.keepAliveTimeout = 60_000;
  const ts = await track(server, 'http');
  return ts;
}

export async function startTlsServer(
  handler: Handler,
  tls: { key: string; cert: string },
): Promise<TestServer> {
  const server = https.createServer(
    { key: tls.key, cert: tls.cert },
    withBody(handler, () => ts),
  );
  server.keepAliveTimeout = 60_000;
  const ts = await track(server, 'https');
  return ts;
}

/** A self-signed certificate for localhost / 127.0.0.1 in a temp dir of its own. */
export function selfSignedCert(): { key: string; cert: string; certFile: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'ww-tls-'));
  const { key, cert, certFile } = makeSelfSignedCert(dir, 'cert');
  return { key, cert, certFile, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

// ---- SGLang-shaped streams (serving_chat.py _generate_chat_stream) ----

export function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  const obj = {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'test',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(obj)}\n\n`;
}

export function usageChunk(completion: number): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-1', choices: [], usage: { prompt_tokens: 5, completion_tokens: completion, total_tokens: 5 + completion } })}\n\n`;
}

export function goodStream(tokens = ['O', 'K', '.']): string[] {
  return [
    chunk({ role: 'assistant', content: '' }),
    ...tokens.map((t) => chunk({ content: t })),
    chunk({}, 'stop'),
    usageChunk(tokens.length),
    'data: [DONE]\n\n',
  ];
}

export function toolStream(args = '{"timezone": "UTC"}'): string[] {
  return [
    chunk({ role: 'assistant', content: '' }),
    chunk({
      tool_calls: [
        {
          id: 'call_0123456789abcdef01234567',
          index: 0,
          type: 'function',
          function: { name: 'get_current_time', arguments: '' },
        },
      ],
    }),
    chunk({ tool_calls: [{ id: null, index: 0, function: { name: null, arguments: args } }] }),
    chunk({}, 'tool_calls'),
    usageChunk(12),
    'data: [DONE]\n\n',
  ];
}

export function sendSse(res: http.ServerResponse, parts: string[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const p of parts) res.write(p);
  res.end();
}

/** A well-behaved server: chat streams, tool calls, /health, /get_server_info. */
export const healthyHandler: Handler = (req, res, body) => {
  if (req.url === '/health') return void res.end('ok');
  if (req.url === '/get_server_info' || req.url === '/server_info') {
    res.setHeader('content-type', 'application/json');
    return void res.end(JSON.stringify({ version: 'test', internal_states: [{}] }));
  }
  if (req.url === '/v1/chat/completions') {
    const parsed = JSON.parse(body) as { tools?: unknown[] };
    return sendSse(res, parsed.tools ? toolStream() : goodStream());
  }
  res.statusCode = 404;
  res.end();
};
