// Ties the web config file to the running server: the TLS options fastify starts with, the auth hook for
// every route, and the watcher that swaps certificates and users when the files change.
import type { Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { onRequestHookHandler } from 'fastify';
import type { Logger } from '../logger.js';
import { BasicAuth } from './auth.js';
import { applyTls, loadWebConfig, WebConfigWatcher, type TlsMaterial, type WebConfig } from './web-config.js';

export class WebSecurity {
  readonly auth = new BasicAuth();
  private watcher: WebConfigWatcher | undefined;

  private constructor(
    private initial: WebConfig,
    private readonly logger: Logger,
  ) {}

  /** Loads and validates the file (ConfigError on a bad one) and prepares the auth hook. */
  static async load(file: string, logger: Logger): Promise<WebSecurity> {
    const ws = new WebSecurity(loadWebConfig(file), logger.child({ component: 'web' }));
    await ws.auth.setUsers(ws.initial.users);
    return ws;
  }

  /** The `https` option for fastify, or undefined to serve plain HTTP. */
  https(): TlsMaterial | undefined {
    const tls = this.initial.tls;
    return tls ? { cert: tls.cert, key: tls.key } : undefined;
  }

  onRequest(): onRequestHookHandler {
    return this.auth.hook() as onRequestHookHandler;
  }

  /** Starts watching the files; new certificates go to `server` (when it serves TLS), new users to the hook. */
  async watch(server: Server | HttpsServer, pollMs?: number): Promise<void> {
    const servingTls = this.initial.tls !== undefined;
    this.watcher = new WebConfigWatcher(this.initial, {
      logger: this.logger,
      pollMs,
      onChange: async (next) => {
        await this.auth.setUsers(next.users);
        if (next.tls && servingTls) applyTls(server as HttpsServer, next.tls);
        else if ((next.tls !== undefined) !== servingTls) {
          this.logger.warn('turning TLS on or off needs a restart; the listener keeps its current mode');
        }
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
