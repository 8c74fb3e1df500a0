// Basic auth for every endpoint (/metrics, the status page, /api/*, /probe, write endpoints) when the web config
// names users. Timing must not tell an attacker whether a user exists, so every attempt runs exactly one bcrypt
// compare: against the user's hash, or against a dummy hash of the same cost for an unknown user
// (exporter-toolkit web/handler.go does the same). Compares run on a worker thread, at most
// MAX_CONCURRENT_COMPARES queued; verified credentials are cached briefly by a keyed hash; a client that keeps
// failing is told to back off (429 + Retry-After) before any compare runs. The back-off is per address, but it
// drains over time, so only fast failing triggers it; it never stands between a credential and its check once that
// credential has verified (issue 24 item 13: one failure every 20 s from a shared address locked a valid scraper
// out); and a credential that already failed is answered 401 from memory: a repeat costs no compare, tells
// nothing new, and does not feed the back-off.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import bcrypt from 'bcryptjs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bcryptWorker, type Compare } from './bcrypt-pool.js';

const CACHE_LIMIT = 100;
/** Verified credentials are trusted this long without another compare (a scraper every 15 s pays once a minute). */
export const CACHE_TTL_MS = 60_000;
/**
 * bcrypt compares queued or running at once (they run one at a time on the worker, src/outputs/server/bcrypt-pool.ts).
 * Over the limit: 429 at once, so a flood cannot queue work without bound.
 */
export const MAX_CONCURRENT_COMPARES = 4;
/** Failed attempts a client may make before it is told to back off. */
export const FREE_FAILURES = 5;
/** The longest back-off: doubles from 1 s with each failure past FREE_FAILURES. */
export const MAX_BACKOFF_MS = 60_000;
/** A client's failure count is forgotten this long after its last failure. */
const FAILURE_MEMORY_MS = 10 * 60_000;
/**
 * A client's failure count drains by one per this interval: the back-off stops fast guessing, while a client that
 * fails now and then (one attempt every 20 s, issue 24 item 13) never reaches it and never locks its address out.
 */
export const FAILURE_DECAY_MS = 15_000;
const FAILURE_CLIENTS_LIMIT = 10_000;

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

export interface BasicAuthOptions {
  /** Runs one bcrypt compare; default on the worker thread. */
  compare?: Compare;
  now?: () => number;
}

interface Failures {
  /** Failures, drained by one per FAILURE_DECAY_MS since `last` (fractional). */
  count: number;
  last: number;
  /** No attempt is verified before this time (Unix ms). */
  until: number;
}

export class BasicAuth {
  private users = new Map<string, string>();
  private dummyHash = '';
  /**
   * Digests of (user, password, hash) that passed, with their expiry: a keyed hash, so the plaintext is never kept,
   * and a scraper every few seconds does not pay bcrypt each time.
   */
  private readonly okCache = new Map<string, number>();
  private readonly cacheKey = randomBytes(32);
  /** Failed attempts per client address: past FREE_FAILURES, 429 until a back-off has passed. */
  private readonly failures = new Map<string, Failures>();
  /**
   * Digests that have verified since the users were set (no expiry, the oldest forgotten past CACHE_LIMIT): only
   * someone who knows the password can present one, so these skip the address's back-off and have compare slots
   * of their own. They are still compared once the short okCache entry has expired.
   */
  private readonly knownGood = new Map<string, true>();
  /** Digests that failed, with when they last did (forgotten after FAILURE_MEMORY_MS; bounded). */
  private readonly knownBad = new Map<string, number>();
  private readonly compare: Compare;
  private readonly now: () => number;

  constructor(opts: BasicAuthOptions = {}) {
    this.compare = opts.compare ?? bcryptWorker.compare;
    this.now = opts.now ?? Date.now;
  }

  /** Replaces the users (on start and on every web config change). */
  async setUsers(users: Map<string, string>): Promise<void> {
    const cost = commonCost(users);
    const dummy = users.size > 0 ? await bcrypt.hash(randomBytes(18).toString('base64'), cost) : '';
    this.users = new Map(users);
    this.dummyHash = dummy;
    this.okCache.clear();
    this.knownGood.clear();
    this.knownBad.clear();
    this.resetFailures();
  }

  /** Forgets every client's failures (new users; tests that are about the 401 itself). */
  resetFailures(): void {
    this.failures.clear();
  }

  enabled(): boolean {
    return this.users.size > 0;
  }

  private comparing = 0;
  /** Compares in flight for credentials in knownGood (a separate budget: a flood cannot take their slots). */
  private comparingTrusted = 0;

  private digest(creds: Credentials, hash: string): string {
    return createHash('sha256')
      .update(this.cacheKey)
      .update(`${creds.user}\0${creds.password}\0${hash}`)
      .digest('base64');
  }

  /** Credentials that passed within CACHE_TTL_MS (the cache scrapers hit): no bcrypt needed. */
  private cached(creds: Credentials | undefined, precomputed?: string): boolean {
    if (creds === undefined) return false;
    const known = this.users.get(creds.user);
    if (known === undefined) return false;
    const digest = precomputed ?? this.digest(creds, known);
    const expires = this.okCache.get(digest);
    if (expires === undefined) return false;
    if (expires > this.now()) return true;
    this.okCache.delete(digest);
    return false;
  }

  /** True when the credentials match a configured user. Always one bcrypt compare on a cache miss. */
  async verify(creds: Credentials | undefined): Promise<boolean> {
    if (!this.enabled()) return true;
    if (creds === undefined) return false;
    if (this.cached(creds)) return true;
    const known = this.users.get(creds.user);
    const hash = known ?? this.dummyHash;
    // A malformed stored hash fails closed (it was validated at load, so this is belt and braces).
    const { ok } = await this.compare(creds.password, hash).catch(() => ({ ok: false }));
    // Both branches above ran the same bcrypt work; the user check below is a constant-time byte compare.
    const matched = ok && known !== undefined && timingSafeEqual(Buffer.from(hash), Buffer.from(known));
    if (matched) {
      this.okCache.delete(this.digest(creds, hash));
      this.okCache.set(this.digest(creds, hash), this.now() + CACHE_TTL_MS);
      if (this.okCache.size > CACHE_LIMIT) this.okCache.delete(this.okCache.keys().next().value!);
      const digest = this.digest(creds, hash);
      this.knownGood.delete(digest);
      this.knownGood.set(digest, true);
      if (this.knownGood.size > CACHE_LIMIT) this.knownGood.delete(this.knownGood.keys().next().value!);
    }
    return matched;
  }

  /** Milliseconds the client must still wait before another attempt is verified; 0 when it may try now. */
  backoffMs(client: string): number {
    const f = this.failures.get(client);
    if (f === undefined) return 0;
    const now = this.now();
    if (now - f.last > FAILURE_MEMORY_MS) {
      this.failures.delete(client);
      return 0;
    }
    return Math.max(0, f.until - now);
  }

  /** Whether these exact credentials failed within FAILURE_MEMORY_MS (refreshing the memory when they did). */
  private failedBefore(digest: string): boolean {
    const at = this.knownBad.get(digest);
    if (at === undefined) return false;
    this.knownBad.delete(digest);
    if (this.now() - at > FAILURE_MEMORY_MS) return false;
    this.knownBad.set(digest, this.now());
    return true;
  }

  private rememberFailure(digest: string): void {
    this.knownBad.delete(digest);
    this.knownBad.set(digest, this.now());
    if (this.knownBad.size > FAILURE_CLIENTS_LIMIT) this.knownBad.delete(this.knownBad.keys().next().value!);
  }

  private failed(client: string): void {
    const now = this.now();
    const prev = this.failures.get(client);
    const drained =
      prev === undefined || now - prev.last > FAILURE_MEMORY_MS
        ? 0
        : Math.max(0, prev.count - (now - prev.last) / FAILURE_DECAY_MS);
    const count = drained + 1;
    const over = Math.ceil(count) - FREE_FAILURES;
    const until = over > 0 ? now + Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (over - 1)) : now;
    this.failures.delete(client);
    this.failures.set(client, { count, last: now, until });
    // Bounded: the oldest client is forgotten first (a Map keeps insertion order; each update re-inserts).
    if (this.failures.size > FAILURE_CLIENTS_LIMIT) this.failures.delete(this.failures.keys().next().value!);
  }

  /** A fastify onRequest hook: 401 with a Basic challenge unless the request carries valid credentials. */
  hook() {
    return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
      if (!this.enabled()) return;
      const creds = parseBasicAuth(req.headers.authorization);
      // Keyed by the hash the compare would use (the dummy one for an unknown user): no lookup result leaks.
      const digest =
        creds === undefined ? undefined : this.digest(creds, this.users.get(creds.user) ?? this.dummyHash);
      // Valid credentials seen lately pass first: a flood from the same address must not lock a scraper out.
      if (this.cached(creds, digest)) return;
      const client = req.ip ?? req.socket?.remoteAddress ?? 'unknown';
      const tooMany = async (retryMs: number, text: string) => {
        await reply
          .code(429)
          .header('Retry-After', String(Math.max(1, Math.ceil(retryMs / 1000))))
          .type('text/plain; charset=utf-8')
          .send(text);
      };
      const unauthorized = async () => {
        await reply
          .code(401)
          .header('WWW-Authenticate', 'Basic realm="wedgewatch", charset="UTF-8"')
          .type('text/plain; charset=utf-8')
          .send('Unauthorized\n');
      };
      let trusted = false;
      if (creds !== undefined && digest !== undefined) {
        if (this.failedBefore(digest)) return unauthorized();
        trusted = this.knownGood.has(digest);
        if (!trusted) {
          // Both decided before the user is looked up, so neither says anything about who exists.
          const wait = this.backoffMs(client);
          if (wait > 0) return tooMany(wait, 'Too many failed authentication attempts; retry later.\n');
          if (this.comparing >= MAX_CONCURRENT_COMPARES)
            return tooMany(1000, 'Too many authentication attempts in progress; retry shortly.\n');
        } else if (this.comparingTrusted >= MAX_CONCURRENT_COMPARES) {
          return tooMany(1000, 'Too many authentication attempts in progress; retry shortly.\n');
        }
      }
      if (trusted) this.comparingTrusted++;
      else this.comparing++;
      let ok: boolean;
      try {
        ok = await this.verify(creds);
      } finally {
        if (trusted) this.comparingTrusted--;
        else this.comparing--;
      }
      if (ok) {
        // A credential seen before proves nothing new about this address (it may be shared with an attacker);
        // a newly verified one ends the address's back-off, as a user who mistyped and then got it right.
        if (!trusted) this.failures.delete(client);
        return;
      }
      // A trusted credential that fails now failed closed (the worker died): not the client's failure.
      if (creds !== undefined && digest !== undefined && !trusted) {
        this.failed(client);
        this.rememberFailure(digest);
      }
      await unauthorized();
    };
  }
}

/**
 * A bcrypt hash as htpasswd writes it: $2a$/$2b$/$2y$ (htpasswd -B writes $2y$), two-digit cost (group 1), 53
 * characters of salt and hash. Here, not in web-config.ts: that one loads zod.
 */
export const BCRYPT_HASH = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;

/** The bcrypt cost most users' hashes use: the dummy hash for unknown users must cost the same. */
export function commonCost(users: Map<string, string>): number {
  const counts = new Map<number, number>();
  for (const h of users.values()) {
    const cost = Number(BCRYPT_HASH.exec(h)?.[1] ?? 10);
    counts.set(cost, (counts.get(cost) ?? 0) + 1);
  }
  let best = 10;
  let bestCount = 0;
  for (const [cost, n] of counts) {
    if (n > bestCount) [best, bestCount] = [cost, n];
  }
  return best;
}
