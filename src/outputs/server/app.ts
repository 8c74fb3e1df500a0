// The daemon's HTTP face. Core routes live here; later features register their own route plugins
// through `plugins`, so this file does not grow with each of them.
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyRequest,
  type onRequestHookHandler,
} from 'fastify';
import type { ServerOptions as HttpsServerOptions } from 'node:https';
import type { Logger } from '../../lib/logger.js';
import type { Metrics } from '../../metrics.js';
import { renderMetrics, type Format } from '../metrics/metrics-render.js';
import { VERSION } from '../../version.js';
import { redactor } from '../../lib/redact.js';
import { ConnectionGuard } from './connection-guard.js';
import { exposition } from './exposition.js';
import { foreignHost, foreignOrigin, type ConnectionFacts } from './origin-policy.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A GET that makes the daemon do work elsewhere (GET /probe): refused cross-site like a write. */
    sideEffects?: boolean;
  }
}

export interface ReloadOutcome {
  ok: boolean;
  errors: string[];
}

export interface ServerDeps {
  metrics: Metrics;
  logger: Logger;
  /** Ready once the first config is loaded and the sources are started. */
  isReady: () => boolean;
  /** Why the daemon is not healthy (a stalled probe scheduler), or undefined when it is. */
  unhealthy?: () => string | undefined;
  /** Whether POST /-/reload and other write endpoints exist (web.enableLifecycle). */
  lifecycleEnabled: () => boolean;
  reload: () => Promise<ReloadOutcome>;
  /** Extra route plugins (status page, /probe, /api/*), registered in order. */
  plugins?: FastifyPluginAsync[];
  /**
   * Open connections beyond this make room by closing the least recently active one without a request in
   * progress (src/outputs/server/connection-guard.ts); default 512.
   */
  maxConnections?: number;
  /** A request's headers must arrive within this (default 5 s); tests shorten it. */
  headersTimeoutMs?: number;
  /** From --web.config.file: serve TLS with this certificate, and check every request (basic auth). */
  web?: { https?: HttpsServerOptions; onRequest?: onRequestHookHandler };
  /** --web.external-url or web.externalURL: the origin browsers reach the daemon by (a reverse proxy's). */
  externalUrl?: () => string | undefined;
}

const LANDING = `<!doctype html>
<html><head><meta charset="utf-8"><title>wedgewatch</title></head>
<body><h1>wedgewatch</h1><p>Version ${VERSION}</p>
<ul><li><a href="/metrics">Metrics</a></li><li><a href="/-/healthy">Healthy</a></li><li><a href="/-/ready">Ready</a></li></ul>
</body></html>`;

/** The connection guard of a server made by createServer (a reload applies a new web.maxConnections to it). */
export const connectionGuards = new WeakMap<FastifyInstance, ConnectionGuard>();

export async function createServer(deps: ServerDeps): Promise<FastifyInstance> {
  // Headers come at once from a scraper or a browser; a connection still sending them after 5 s is not one. Node
  // checks this only every connectionsCheckingInterval (default 30 s), so that is shortened too. Passed in the
  // server options because fastify copies `http` only for plain HTTP, and https.createServer reads them as well.
  const headersTimeout = deps.headersTimeoutMs ?? 5_000;
  const timeouts = {
    headersTimeout,
    requestTimeout: 30_000,
    connectionsCheckingInterval: Math.min(1_000, headersTimeout),
  };
  const app = Fastify({
    // Request logs are at info; a scrape every few seconds must not flood the log, so http logs warn and up.
    loggerInstance: deps.logger.child({ component: 'http' }, { level: 'warn' }) as FastifyBaseLogger,
    // Scrapers hold keep-alive connections open; shutdown must not wait for them.
    forceCloseConnections: true,
    return503OnClosing: true,
    bodyLimit: 1024 * 1024,
    // An idle keep-alive connection is closed after 30 s (a scraper every 15 s keeps its own), a request's
    // headers must arrive within headersTimeout and the whole request within 30 s.
    keepAliveTimeout: 30_000,
    requestTimeout: 30_000,
    http: timeouts,
    ...(deps.web?.https ? { https: { ...deps.web.https, ...timeouts } } : {}),
  }) as unknown as FastifyInstance; // an https server has the same routing API; the type differs only in raw server
  const facts = (req: FastifyRequest): ConnectionFacts => {
    const ext = deps.externalUrl?.();
    return {
      localAddress: req.socket?.localAddress,
      localPort: req.socket?.localPort,
      encrypted: (req.socket as { encrypted?: boolean } | undefined)?.encrypted === true,
      ...(ext !== undefined ? { externalUrl: ext } : {}),
    };
  };
  // DNS rebinding (issue 24 item 9): on a loopback connection a Host that is not one of this server's names is a
  // page whose name was re-pointed at 127.0.0.1. Refused before anything else runs, reads included.
  app.addHook('onRequest', async (req, reply) => {
    const why = foreignHost(req.headers.host, facts(req));
    if (why !== undefined) await reply.code(403).type('text/plain; charset=utf-8').send(`${why}\n`);
  });
  // Before any route: auth applies to every endpoint, including those plugins add and the 404 handler.
  if (deps.web?.onRequest) app.addHook('onRequest', deps.web.onRequest);
  // Write endpoints (POST /-/reload, remediation pause/resume) and GETs with side effects (/probe) refuse what
  // a web page on another origin can send: a foreign Origin, a cross-site fetch, and for writes a body that is
  // not JSON (an HTML form posts text/plain or urlencoded without a preflight).
  app.addHook('onRequest', async (req, reply) => {
    const safe = req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS';
    if (safe && (req.method === 'OPTIONS' || req.routeOptions.config?.sideEffects !== true)) return;
    const why = crossSiteRequest(req.headers, facts(req), safe ? 'read' : 'write');
    if (why !== undefined) {
      const [code, text] = why;
      await reply.code(code).type('text/plain; charset=utf-8').send(`${text}\n`);
    }
  });
  // Every answer passes the redactor (src/lib/redact.ts): a secret that reached any state (a remediation argv, a
  // log line quoting a token, an error message) never leaves over HTTP, whichever route serialised it. The one
  // exception is the /metrics body it was handed: redacted series by series when rendered (metrics-render.ts),
  // it is not read again — by identity, so an error answer on that route still passes here.
  const redactedBodies = new WeakMap<object, Buffer>();
  app.addHook('onSend', async (_req, reply, payload) => {
    // A compressed body was redacted before compression (exposition.ts); its bytes are not text.
    if (reply.getHeader('content-encoding') !== undefined) return payload;
    if (Buffer.isBuffer(payload) && redactedBodies.get(reply) === payload) return payload;
    if (typeof payload === 'string') return redactor.redact(payload);
    if (
      Buffer.isBuffer(payload) &&
      /^(text\/|application\/json)/.test(String(reply.getHeader('content-type')))
    )
      return redactor.redact(payload.toString('utf8'));
    return payload;
  });

  // Scrapes that arrive while a body is being written (an HA pair of Prometheus servers) share it.
  const rendering = new Map<Format, Promise<Buffer>>();
  const render = (format: Format) => {
    let p = rendering.get(format);
    if (p === undefined) {
      p = renderMetrics(deps.metrics.registry, { format, redactor }).finally(() => rendering.delete(format));
      rendering.set(format, p);
    }
    return p;
  };
  app.get('/metrics', async (req, reply) => {
    const out = await exposition(deps.metrics.registry, req.headers, render);
    reply.header('Vary', 'Accept, Accept-Encoding');
    if (out.encoding) reply.header('Content-Encoding', out.encoding);
    else redactedBodies.set(reply, out.body);
    return reply.type(out.contentType).send(out.body);
  });
  // Not mere liveness: a daemon whose scheduler stopped is healthy-but-wedged itself, and its supervisor
  // (systemd watchdog script, Kubernetes liveness probe) should restart it.
  app.get('/-/healthy', async (_req, reply) => {
    const why = deps.unhealthy?.();
    return why === undefined
      ? reply.type('text/plain').send('wedgewatch is Healthy.\n')
      : reply.code(503).type('text/plain').send(`wedgewatch is not healthy: ${why}\n`);
  });
  app.get('/-/ready', async (_req, reply) =>
    deps.isReady()
      ? reply.type('text/plain').send('wedgewatch is Ready.\n')
      : reply.code(503).type('text/plain').send('wedgewatch is not ready.\n'),
  );
  app.post('/-/reload', async (_req, reply) => {
    if (!deps.lifecycleEnabled()) {
      return reply
        .code(404)
        .type('text/plain')
        .send('Lifecycle API is not enabled (--web.enable-lifecycle or web.enableLifecycle).\n');
    }
    const out = await deps.reload();
    return out.ok
      ? reply.type('text/plain').send('Reloaded.\n')
      : reply
          .code(500)
          .type('text/plain')
          .send(
            redactor.redact(`Reload failed; the running configuration is kept:\n${out.errors.join('\n')}\n`),
          );
  });
  for (const plugin of deps.plugins ?? []) await app.register(plugin);
  connectionGuards.set(app, new ConnectionGuard(app.server, { max: deps.maxConnections ?? 512 }));
  if (!app.hasRoute({ method: 'GET', url: '/' })) {
    app.get('/', async (_req, reply) => reply.type('text/html; charset=utf-8').send(LANDING));
  }
  return app;
}

/**
 * Why a write (or a GET with side effects, `read`) must be refused ([status, message]), or undefined when it may
 * proceed. The Origin is checked against this server's own origins (origin-policy.ts), never the request's Host.
 */
export function crossSiteRequest(
  h: Record<string, string | string[] | undefined>,
  c: ConnectionFacts,
  kind: 'write' | 'read',
): [number, string] | undefined {
  const origin = h.origin;
  if (typeof origin === 'string') {
    const why = foreignOrigin(origin, c);
    if (why !== undefined) return [403, `cross-origin ${kind} refused: ${why}`];
  }
  // same-site is another origin too (another port of localhost is the same site): only same-origin and none
  // (typed in the address bar, a bookmark) come from this server's own pages or the operator.
  const site = h['sec-fetch-site'];
  if (site === 'cross-site' || site === 'same-site') return [403, `${site} ${kind} refused`];
  if (kind === 'read') return undefined;
  const type = h['content-type'];
  const hasBody =
    (h['content-length'] !== undefined && h['content-length'] !== '0') ||
    h['transfer-encoding'] !== undefined;
  // A bodiless POST (curl -X POST …/-/reload, as Prometheus documents) has no content type and is fine.
  if (type === undefined ? hasBody : !/^application\/json\s*(;|$)/i.test(String(type)))
    return [415, 'write endpoints take application/json (or no body at all)'];
  return undefined;
}
