// A keep-alive-capable HTTP reverse proxy in front of the router (the hop a user's request crosses first).
// It counts requests per client connection, so keepalive_stall can hold only the reused ones.
import {
  Agent,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import { HOST, sendJson, type Handler } from './http.js';
import { CONN_SEQ_HEADER } from './router.js';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
]);

export interface ProxyDeps {
  upstreamPort(): number;
  stallReused(): boolean;
  onStall(): void;
  /** The proxy's own /health status when a fault overrides it; undefined forwards /health upstream. */
  healthStatus(): number | undefined;
}

export class Proxy {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256 });
  private readonly requestsOnSocket = new WeakMap<Socket, number>();
  private held: { req: IncomingMessage; res: ServerResponse }[] = [];

  constructor(private readonly deps: ProxyDeps) {}

  readonly handler: Handler = (req, res) => {
    const n = (this.requestsOnSocket.get(req.socket) ?? 0) + 1;
    this.requestsOnSocket.set(req.socket, n);
    const health = this.deps.healthStatus();
    if (health !== undefined && req.method === 'GET' && req.url?.split('?')[0] === '/health') {
      // A failing proxy answers its own health check instead of passing the router's through.
      res.writeHead(health, { 'content-length': 0 });
      res.end();
      return;
    }
    if (n > 1 && this.deps.stallReused()) {
      this.held.push({ req, res });
      res.on('close', () => (this.held = this.held.filter((h) => h.res !== res)));
      this.deps.onStall();
      return;
    }
    this.forward(req, res);
  };

  /** Forwards what a fault was holding (the fault was turned off). */
  releaseHeld(): void {
    const held = this.held;
    this.held = [];
    for (const h of held) if (!h.res.destroyed) this.forward(h.req, h.res);
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const up = request(
      {
        host: HOST,
        port: this.deps.upstreamPort(),
        method: req.method,
        path: req.url,
        // The client connection's request count, for faults keyed to reused connections (the router cannot
        // tell: its sockets from this hop are pooled).
        headers: {
          ...stripHopByHop(req.headers),
          [CONN_SEQ_HEADER]: String(this.requestsOnSocket.get(req.socket) ?? 1),
        },
        agent: this.agent,
      },
      (ur) => {
        res.writeHead(ur.statusCode ?? 502, stripHopByHop(ur.headers));
        res.flushHeaders();
        ur.pipe(res);
        ur.on('error', () => res.destroy());
      },
    );
    up.on('error', (err) => {
      if (!res.headersSent) sendJson(res, 502, { error: 'bad gateway', detail: err.message });
      else res.destroy();
    });
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  }

  close(): void {
    for (const h of this.held) h.res.destroy();
    this.held = [];
    this.agent.destroy();
  }
}

function stripHopByHop(h: IncomingHttpHeaders): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [k, v] of Object.entries(h)) if (!HOP_BY_HOP.has(k) && k !== CONN_SEQ_HEADER) out[k] = v;
  return out;
}
