// Which origins and Host names are this server's (issue 24 items 8 and 9). Comparing a request's Origin with its
// own Host header proves nothing under DNS rebinding: a page on http://evil.example:9787 whose name was re-pointed
// at 127.0.0.1 sends Host and Origin that match each other. So the server's origins come from what the server
// knows, never from the request: the configured external URL (--web.external-url / web.externalURL, as
// Prometheus's flag), and the address the connection actually arrived on (its local IP and port) — plus
// `localhost` and the machine's host name when that address is loopback. An IP literal cannot be rebound, and
// neither can `localhost` (browsers resolve it to loopback themselves); any other name must be the external URL.
import { isIP } from 'node:net';
import { hostname } from 'node:os';

export interface ConnectionFacts {
  /** The address and port the connection arrived on (socket.localAddress/localPort). */
  localAddress?: string;
  localPort?: number;
  /** Whether the connection is TLS (the scheme of this server's own origins). */
  encrypted: boolean;
  /** --web.external-url or web.externalURL, when configured. */
  externalUrl?: string;
}

/** "::ffff:127.0.0.1" (an IPv4 client on a dual-stack listener) → "127.0.0.1"; other addresses unchanged. */
export function plainAddress(a: string): string {
  return a.toLowerCase().startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
}

export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const a = plainAddress(address);
  return isIP(a) === 4 ? a.startsWith('127.') : a === '::1';
}

/** The origin of a URL in its normal form ("http://h:80" → "http://h"), or undefined when it does not parse. */
function normalOrigin(url: string): string | undefined {
  try {
    const o = new URL(url).origin;
    return o === 'null' ? undefined : o;
  } catch {
    return undefined;
  }
}

/** Read once: a syscall per request on the /metrics path is not worth a host name that never changes in practice. */
let names: string[] | undefined;

/** Names a Host header may carry on a loopback connection, besides IP literals and the external URL's host. */
function loopbackNames(): string[] {
  names ??= ['localhost', hostname().toLowerCase()];
  return names;
}

/** The origins a same-origin browser request to this server can carry on this connection. */
export function serverOrigins(c: ConnectionFacts): Set<string> {
  const out = new Set<string>();
  const ext = c.externalUrl === undefined ? undefined : normalOrigin(c.externalUrl);
  if (ext !== undefined) out.add(ext);
  if (c.localAddress !== undefined && c.localPort !== undefined) {
    const scheme = c.encrypted ? 'https' : 'http';
    const a = plainAddress(c.localAddress);
    const hosts = [isIP(a) === 6 ? `[${a}]` : a];
    if (isLoopback(a)) hosts.push(...loopbackNames());
    for (const h of hosts) {
      const o = normalOrigin(`${scheme}://${h}:${c.localPort}`);
      if (o !== undefined) out.add(o);
    }
  }
  return out;
}

/** Why an Origin header is not this server's, or undefined when it is. */
export function foreignOrigin(origin: string, c: ConnectionFacts): string | undefined {
  const o = origin === 'null' ? undefined : normalOrigin(origin);
  if (o !== undefined && serverOrigins(c).has(o)) return undefined;
  return c.externalUrl === undefined
    ? `Origin ${origin} is not this server (reached by another name? set --web.external-url)`
    : `Origin ${origin} is not this server (${normalOrigin(c.externalUrl) ?? c.externalUrl})`;
}

/**
 * Why a Host header must be refused on a loopback connection, or undefined to serve it. Only loopback: there
 * the only legitimate names are few and known, and a rebound name is the attack; on other interfaces a server
 * is reached by names it cannot know (service DNS, load balancers) and the Origin check guards what matters.
 */
export function foreignHost(host: string | undefined, c: ConnectionFacts): string | undefined {
  if (host === undefined || !isLoopback(c.localAddress)) return undefined;
  // The common case without a URL parse (this runs for every request, /metrics included): an IP literal.
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:]*))(?::\d*)?$/.exec(host);
  if (m !== null && isIP(m[1] ?? m[2]!) !== 0) return undefined;
  let name: string;
  try {
    name = new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return `Host ${JSON.stringify(host)} does not parse`;
  }
  if (name.startsWith('[') && isIP(name.slice(1, -1)) !== 0) return undefined;
  if (loopbackNames().includes(name)) return undefined;
  if (c.externalUrl !== undefined) {
    try {
      if (new URL(c.externalUrl).hostname.toLowerCase() === name) return undefined;
    } catch {
      // an unparsable external URL names nothing (the config check refuses one)
    }
  }
  return `Host ${JSON.stringify(host)} is not a name of this server on a loopback address (DNS rebinding?); a reverse proxy's name goes in --web.external-url`;
}
