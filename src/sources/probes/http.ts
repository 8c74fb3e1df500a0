// undici dispatchers per hop: `keepalive` is one persistent connection reused across probes (what a
// pooling client or proxy does to the engine), `fresh` is a brand-new TCP connection for every probe.
// Comparing the two is what tells a stalling proxy from a stalling engine (docs/design.md#principles, 2).
import { resolve } from 'node:path';
import { Client } from '../../lib/http/undici.js';
import type { EndpointConfig } from '../../config/schema.js';
import { MAX_CA_FILE_BYTES, readSmallFile } from '../../lib/small-file.js';
import type { ConnKind } from '../../core/signals.js';

/** Per-probe timers own every timeout; undici's own would fire with less context, so they are far away. */
const FAR_TIMEOUT_MS = 24 * 3_600_000;
/** Keep the reused connection across probe intervals (servers close it when they want to). */
const KEEPALIVE_IDLE_MS = 10 * 60_000;

export interface ConnectOptions {
  ca?: Buffer;
  rejectUnauthorized: boolean;
  servername?: string;
}

/** TLS options of an endpoint; `baseDir` is the config file's directory (caFile is relative to it). */
export function tlsOptions(endpoint: EndpointConfig, baseDir = '.'): ConnectOptions {
  const tls = endpoint.tls;
  return {
    // `check` refused a FIFO or a huge file here; the same read guards a path swapped since.
    ca: tls.caFile === undefined ? undefined : readSmallFile(resolve(baseDir, tls.caFile), MAX_CA_FILE_BYTES),
    rejectUnauthorized: !tls.insecureSkipVerify,
    servername: tls.serverName,
  };
}

function newClient(origin: string, connect: ConnectOptions): Client {
  return new Client(origin, {
    pipelining: 1,
    connect: { ...connect, timeout: FAR_TIMEOUT_MS },
    headersTimeout: FAR_TIMEOUT_MS,
    bodyTimeout: FAR_TIMEOUT_MS,
    keepAliveTimeout: KEEPALIVE_IDLE_MS,
    keepAliveMaxTimeout: KEEPALIVE_IDLE_MS,
  });
}

function subscribe(client: Client, cb: () => void): () => void {
  // Every connect, not only the first: a keep-alive run that primed its connection must see a second one.
  client.on('connect', cb);
  return () => client.off('connect', cb);
}

/** A connection lease for one probe run: the client to use, and whether its socket is already open. */
export interface Lease {
  client: Client;
  conn: ConnKind;
  /**
   * True while the lease's client holds an open connection, so the next request goes over it (no connect phase).
   * Read live: a server that closes after each response (llama-server) leaves the next request a new connection,
   * and the timeline says what was seen rather than what the lease started with.
   */
  readonly reused: boolean;
  /** Calls cb when this lease's client opens a new connection; returns the unsubscribe function. */
  onConnect(cb: () => void): () => void;
  /** Returns the lease; fresh clients are destroyed, so their socket never outlives the probe. */
  release(): Promise<void>;
}

interface KeepaliveConn {
  client: Client;
  open: boolean;
}

/**
 * Dispatchers for one hop. Each probe gets its own keep-alive connection (by `key`, the probe name): two
 * probes sharing one pipelining-1 connection would queue behind each other, and a hung chat probe would
 * make the tool-call probe time out too, blaming the wrong thing.
 */
export class EndpointDispatchers {
  readonly origin: string;
  private readonly keepalive = new Map<string, KeepaliveConn>();
  private closed = false;
  private readonly fresh = new Set<Client>();

  constructor(
    readonly endpoint: EndpointConfig,
    private readonly connect: ConnectOptions,
  ) {
    this.origin = new URL(endpoint.url).origin;
  }

  /** The URL path prefix of the endpoint (an endpoint may be mounted under a path). */
  get basePath(): string {
    const p = new URL(this.endpoint.url).pathname;
    return p.endsWith('/') ? p.slice(0, -1) : p;
  }

  lease(conn: ConnKind, key = ''): Lease {
    if (this.closed) throw new Error('dispatchers are closed');
    if (conn === 'keepalive') {
      let ka = this.keepalive.get(key);
      if (ka === undefined) {
        const entry: KeepaliveConn = { client: newClient(this.origin, this.connect), open: false };
        entry.client.on('connect', () => (entry.open = true));
        entry.client.on('disconnect', () => (entry.open = false));
        // Errors surface on the request; without a listener an 'error' event would crash the process.
        entry.client.on('connectionError', () => (entry.open = false));
        this.keepalive.set(key, entry);
        ka = entry;
      }
      const client = ka.client;
      const entry = ka;
      return {
        client,
        conn,
        get reused() {
          return entry.open;
        },
        onConnect: (cb) => subscribe(client, cb),
        release: async () => {},
      };
    }
    const client = newClient(this.origin, this.connect);
    this.fresh.add(client);
    // A fresh lease opens its own connection; a run of several requests (the tool-call matrix) reuses it for
    // the next one unless the server closed it.
    const state = { open: false };
    client.on('connect', () => (state.open = true));
    client.on('disconnect', () => (state.open = false));
    client.on('connectionError', () => (state.open = false));
    return {
      client,
      conn,
      get reused() {
        return state.open;
      },
      onConnect: (cb) => subscribe(client, cb),
      release: async () => {
        this.fresh.delete(client);
        await client.destroy().catch(() => {});
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.fresh, ...[...this.keepalive.values()].map((k) => k.client)];
    this.fresh.clear();
    this.keepalive.clear();
    await Promise.all(all.map((c) => c.destroy().catch(() => {})));
  }
}
