// The connection cap, slowloris-proof (issue 24 item 16). Node's server.maxConnections refuses the newest
// connection at accept, so 520 connections that each trickle a header byte kept a scraper out of /metrics: the
// cap counted them before any request (or auth) existed. Here a connection that has no request in progress — one
// still sending its headers, or an idle keep-alive one — is what gives way: over the cap, the least recently
// active such connection is closed to make room, and only when every open connection is mid-request is the new
// one refused. One address may hold at most a quarter of the cap, so connections from elsewhere are not the ones
// closed to make room for it.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { plainAddress } from './origin-policy.js';

interface Conn {
  socket: Socket;
  address: string;
  /** Requests in progress on this connection (headers received, answer not finished). */
  busy: number;
  /** When it last connected or finished a request (performance-clock ms). */
  lastActive: number;
}

export interface ConnectionGuardOptions {
  max: number;
  now?: () => number;
}

/** The most one address may hold: a quarter of the cap, at least 8. */
export function perAddressLimit(max: number): number {
  return Math.max(8, Math.ceil(max / 4));
}

export class ConnectionGuard {
  private readonly conns = new Map<string, Conn>();
  /** The same entries by socket (the raw one, and the TLS one once seen): a request finds its own without a key. */
  private readonly bySocket = new WeakMap<Socket, Conn>();
  private readonly perAddress = new Map<string, number>();
  private maxConns: number;
  private readonly now: () => number;
  /** Connections closed to make room, and new ones refused (for tests and the debug log). */
  evicted = 0;
  refused = 0;

  constructor(server: Server, opts: ConnectionGuardOptions) {
    this.maxConns = opts.max;
    this.now = opts.now ?? (() => performance.now());
    // The raw TCP socket (before TLS): a handshake that never completes holds a slot too.
    server.on('connection', (socket: Socket) => this.accept(socket));
    server.on('request', (req: { socket: Socket }, res: NodeJS.EventEmitter) => {
      let c = this.bySocket.get(req.socket);
      if (c === undefined) {
        c = this.conns.get(key(req.socket));
        if (c === undefined) return;
        this.bySocket.set(req.socket, c);
      }
      c.busy++;
      res.once('close', () => {
        c.busy--;
        c.lastActive = this.now();
      });
    });
  }

  /** Applied to new connections (a reload changes web.maxConnections in place). */
  set max(n: number) {
    this.maxConns = n;
  }

  get max(): number {
    return this.maxConns;
  }

  open(): number {
    return this.conns.size;
  }

  private accept(socket: Socket): void {
    const address = plainAddress(socket.remoteAddress ?? 'unknown');
    const mine = this.perAddress.get(address) ?? 0;
    if (mine >= perAddressLimit(this.maxConns)) {
      if (!this.evictIdle(address)) return this.refuse(socket);
    } else if (this.conns.size >= this.maxConns) {
      if (!this.evictIdle(undefined)) return this.refuse(socket);
    }
    const k = key(socket);
    const conn: Conn = { socket, address, busy: 0, lastActive: this.now() };
    this.conns.set(k, conn);
    this.bySocket.set(socket, conn);
    this.perAddress.set(address, (this.perAddress.get(address) ?? 0) + 1);
    socket.once('close', () => {
      if (this.conns.get(k)?.socket !== socket) return;
      this.conns.delete(k);
      const n = (this.perAddress.get(address) ?? 1) - 1;
      if (n <= 0) this.perAddress.delete(address);
      else this.perAddress.set(address, n);
    });
  }

  private refuse(socket: Socket): void {
    this.refused++;
    socket.destroy();
  }

  /** Closes the least recently active connection without a request in progress (of `address`, if given). */
  private evictIdle(address: string | undefined): boolean {
    let victim: Conn | undefined;
    for (const c of this.conns.values()) {
      if (c.busy > 0 || (address !== undefined && c.address !== address)) continue;
      if (victim === undefined || c.lastActive < victim.lastActive) victim = c;
    }
    if (victim === undefined) return false;
    this.evicted++;
    // Removed now, not on 'close': the new connection takes its place at once.
    this.conns.delete(key(victim.socket));
    const n = (this.perAddress.get(victim.address) ?? 1) - 1;
    if (n <= 0) this.perAddress.delete(victim.address);
    else this.perAddress.set(victim.address, n);
    victim.socket.destroy();
    return true;
  }
}

/** A TCP connection's identity, the same for the raw socket and the TLS socket over it. */
function key(s: Socket): string {
  return `${s.remoteAddress ?? ''}|${s.remotePort ?? ''}`;
}
