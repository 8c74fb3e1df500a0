// A loopback HTTP service that can be crashed (port closed, every socket destroyed) and restarted on the
// same port, and that owns its sockets so stop() leaves no handle behind.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export const HOST = '127.0.0.1';

export interface ServiceOptions {
  /**
   * Close the connection after each streamed (text/event-stream) response, with no `Connection: close` said,
   * as llama-server does: cpp-httplib ends its keep-alive loop when the chunked content provider returns false,
   * which llama.cpp's streaming handlers do once the stream is done (tools/server/server.cpp
   * `chunked_content_provider … return false`, cpp-httplib `process_and_close_socket`). A request the client
   * writes on that socket is dropped unanswered (the connection reset): deterministic here, a race upstream.
   */
  closeAfterStream?: boolean;
}

export class Service {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  /** Sockets that carried a streamed response under closeAfterStream: closing, never answered again. */
  private readonly closing = new WeakSet<Socket>();
  /** Requests dropped because they came on a socket closed after a streamed response. */
  droppedOnClosed = 0;
  port: number;

  constructor(
    readonly name: string,
    private readonly handler: Handler,
    port = 0,
    private readonly onConnection?: (socket: Socket) => void,
    private readonly options: ServiceOptions = {},
  ) {
    this.port = port;
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    if (this.options.closeAfterStream) {
      const socket = req.socket;
      if (this.closing.has(socket)) {
        this.droppedOnClosed++;
        socket.destroy();
        return;
      }
      // writeHead with a headers object does not keep them for getHeader(): the content type is read on the way.
      let streamed = false;
      const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
      res.writeHead = ((...args: unknown[]) => {
        const headers = args.find(
          (a, i) => i > 0 && typeof a === 'object' && a !== null && !Array.isArray(a),
        );
        const ct =
          (headers as Record<string, unknown> | undefined)?.['content-type'] ?? res.getHeader('content-type');
        streamed = typeof ct === 'string' && ct.startsWith('text/event-stream');
        return writeHead(...args);
      }) as ServerResponse['writeHead'];
      res.on('finish', () => {
        // The close is not sent now: the client finds it when it writes the next request, the side of
        // upstream's race a client loses when it sends at once (every time here, so tests are deterministic).
        // An idle socket still goes at the server's keep-alive timeout.
        if (streamed) this.closing.add(socket);
      });
    }
    this.handler(req, res);
  }

  get up(): boolean {
    return this.server !== undefined;
  }

  get url(): string {
    return `http://${HOST}:${this.port}`;
  }

  async listen(): Promise<void> {
    if (this.server) return;
    const server = createServer((req, res) => this.serve(req, res));
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      this.onConnection?.(socket);
    });
    // A malformed request must not take the simulator down.
    server.on('clientError', (_err, socket: Socket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, HOST, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address();
    if (addr && typeof addr === 'object') this.port = addr.port;
    this.server = server;
  }

  /** Closes the port and cuts every open connection, as a dying process would. */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await closed;
  }
}

/** Reads a request body up to `limit` bytes; rejects beyond it. */
export function readBody(req: IncomingMessage, limit = 1 << 20): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new Error(`request body over ${limit} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function pathOf(req: IncomingMessage): string {
  return (req.url ?? '/').split('?')[0]!;
}

export function clientAddr(req: IncomingMessage): string {
  return `${req.socket.remoteAddress ?? '127.0.0.1'}:${req.socket.remotePort ?? 0}`;
}
