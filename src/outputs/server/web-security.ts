// Ties the web config file to the running server: the TLS options fastify starts with (versions, ciphers, client
// certificates), the response headers and auth hook for every route, and the watcher that swaps certificates,
// TLS settings, headers and users when the files change.
import type { Server } from 'node:http';
import type { Server as HttpsServer, ServerOptions as HttpsOptions } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Logger } from '../../lib/logger.js';
import { BasicAuth } from './auth.js';
import { TokenBucket } from './rate-limit.js';
import {
  applyTls,
  clientCertProblem,
  httpsOptions,
  loadWebConfig,
  WebConfigWatcher,
  type WebConfig,
} from './web-config.js';

export class WebSecurity {
  readonly auth = new BasicAuth();
  private watcher: WebConfigWatcher | undefined;
  /** The config in force (the watcher replaces it on a valid change). */
  private current: WebConfig;

  private constructor(
    private readonly initial: WebConfig,
    private readonly logger: Logger,
  ) {
    this.current = initial;
    this.setRateLimit(initial);
  }

  /** Loads and validates the file (ConfigError on a bad one) and prepares the auth hook. */
  static async load(file: string, logger: Logger): Promise<WebSecurity> {
    const ws = new WebSecurity(loadWebConfig(file), logger.child({ component: 'web' }));
    await ws.auth.setUsers(ws.initial.users);
    if (ws.initial.http2 === true)
      ws.logger.info('http_server_config.http2: the server speaks HTTP/1.1 (Prometheus scrapes over it)');
    return ws;
  }

  /** The `https` option for fastify, or undefined to serve plain HTTP. */
  https(): HttpsOptions | undefined {
    const tls = this.initial.tls;
    return tls ? httpsOptions(tls) : undefined;
  }

  /** Adds the configured response headers, applies rate_limit, then checks basic auth. */
  onRequest(): onRequestHookHandler {
    const auth = this.auth.hook();
    return (async (req: FastifyRequest, reply: FastifyReply) => {
      for (const [k, v] of Object.entries(this.current.headers)) reply.header(k, v);
      if (this.bucket !== undefined && !this.bucket.allow()) {
        await reply
          .code(429)
          .header('Retry-After', String(Math.max(1, Math.ceil(this.bucket.waitMs() / 1000))))
          .type('text/plain; charset=utf-8')
          .send('Too Many Requests\n');
        return;
      }
      await auth(req, reply);
    }) as onRequestHookHandler;
  }

  private bucket: TokenBucket | undefined;

  private setRateLimit(next: WebConfig, prev?: WebConfig): void {
    const a = next.rateLimit;
    const b = prev?.rateLimit;
    if (prev !== undefined && a?.intervalMs === b?.intervalMs && a?.burst === b?.burst) return;
    this.bucket = a === undefined ? undefined : new TokenBucket(a.intervalMs, a.burst);
  }

  /** Starts watching the files; new TLS settings go to `server` (when it serves TLS), new users to the hook. */
  async watch(server: Server | HttpsServer, pollMs?: number): Promise<void> {
    const servingTls = this.initial.tls !== undefined;
    if (servingTls) {
      // Client-certificate policies Node does not enforce in the handshake (web-config.ts clientCertProblem).
      server.on('secureConnection', (sock: TLSSocket) => {
        const tls = this.current.tls;
        const why = tls && clientCertProblem(tls, sock);
        if (why === undefined) return;
        this.logger.debug({ remote: sock.remoteAddress, why }, 'TLS connection refused');
        sock.destroy();
      });
    }
    this.watcher = new WebConfigWatcher(this.initial, {
      logger: this.logger,
      pollMs,
      onChange: async (next) => {
        await this.auth.setUsers(next.users);
        if (next.tls && servingTls) applyTls(server as HttpsServer, next.tls);
        else if ((next.tls !== undefined) !== servingTls) {
          this.logger.warn('turning TLS on or off needs a restart; the listener keeps its current mode');
        }
        this.setRateLimit(next, this.current);
        this.current = servingTls || next.tls === undefined ? next : { ...next, tls: undefined };
      },
    });
    await this.watcher.start();
  }

  /** One poll of the watched files now (tests, and SIGHUP). */
  async recheck(): Promise<void> {
    await this.watcher?.check();
  }

  stop(): void {
    this.watcher?.stop();
  }
}
