// Basic auth for every endpoint (/metrics, the status page, /api/*, /probe, write endpoints) when the web config
// names users. Timing must not tell an attacker whether a user exists, so every attempt runs exactly one bcrypt
// compare: against the user's hash, or against a dummy hash of the same cost for an unknown user
// (exporter-toolkit web/handler.go does the same).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import bcrypt from 'bcryptjs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { commonCost } from './web-config.js';

const CACHE_LIMIT = 100;
/**
 * bcrypt compares in flight at once. Each costs tens of milliseconds of CPU: a flood of bad passwords must not
 * take the core that runs the probes and the log followers (DESIGN.md principle 4). Over the limit: 429.
 */
export const MAX_CONCURRENT_COMPARES = 4;

export interface Credentials {
  user: string;
  password: string;
}

/** Parses "Authorization: Basic base64(user:password)"; undefined when absent or malformed. */
export function parseBasicAuth(header: string | undefined): Credentials | undefined {
  if (header === undefined) return undefined;
  const m = /^Basic[ ]+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export class BasicAuth {
  private users = new Map<string, string>();
  private dummyHash = '';
  /** Successful (user, password, hash) digests, so a scraper every few seconds does not pay bcrypt each time. */
  private readonly okCache = new Map<string, true>();
  private readonly cacheKey = randomBytes(32);

  /** Replaces the users (on start and on every web config change). */
  async setUsers(users: Map<string, string>): Promise<void> {
    const cost = commonCost(users);
    const dummy = users.size > 0 ? await bcrypt.hash(randomBytes(18).toString('base64'), cost) : '';
    this.users = new Map(users);
    this.dummyHash = dummy;
    this.okCache.clear();
  }

  enabled(): boolean {
    return this.users.size > 0;
  }

  private comparing = 0;

  private digest(creds: Credentials, hash: string): string {
    return createHash('sha256')
      .update(this.cacheKey)
      .update(`${creds.user}\0${creds.password}\0${hash}`)
      .digest('base64');
  }

  /** Credentials that passed before (the cache scrapers hit): no bcrypt needed. */
  private cached(creds: Credentials | undefined): boolean {
    if (creds === undefined) return false;
    const known = this.users.get(creds.user);
    return known !== undefined && this.okCache.has(this.digest(creds, known));
  }

  /** True when the credentials match a configured user. Always one bcrypt compare on a cache miss. */
  async verify(creds: Credentials | undefined): Promise<boolean> {
    if (!this.enabled()) return true;
    if (creds === undefined) return false;
    const known = this.users.get(creds.user);
    const hash = known ?? this.dummyHash;
    const digest = this.digest(creds, hash);
    if (known !== undefined && this.okCache.has(digest)) return true;
    // A malformed stored hash fails closed (it was validated at load, so this is belt and braces).
    const ok = await bcrypt.compare(creds.password, hash).catch(() => false);
    // Both branches above ran the same bcrypt work; the user check below is a constant-time byte compare.
    const matched = ok && known !== undefined && timingSafeEqual(Buffer.from(hash), Buffer.from(known));
    if (matched) {
      this.okCache.set(digest, true);
      if (this.okCache.size > CACHE_LIMIT) this.okCache.delete(this.okCache.keys().next().value!);
    }
    return matched;
  }

  /** A fastify onRequest hook: 401 with a Basic challenge unless the request carries valid credentials. */
  hook() {
    return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
      if (!this.enabled()) return;
      const creds = parseBasicAuth(req.headers.authorization);
      if (this.cached(creds)) return;
      if (creds !== undefined && this.comparing >= MAX_CONCURRENT_COMPARES) {
        // Decided before the user is looked up, so it says nothing about who exists.
        await reply
          .code(429)
          .header('Retry-After', '1')
          .type('text/plain; charset=utf-8')
          .send('Too many authentication attempts in progress; retry shortly.\n');
        return;
      }
      this.comparing++;
      let ok: boolean;
      try {
        ok = await this.verify(creds);
      } finally {
        this.comparing--;
      }
      if (ok) return;
      await reply
        .code(401)
        .header('WWW-Authenticate', 'Basic realm="wedgewatch", charset="UTF-8"')
        .type('text/plain; charset=utf-8')
        .send('Unauthorized\n');
    };
  }
}
