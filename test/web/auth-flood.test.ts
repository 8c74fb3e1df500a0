// Issue 16 item 6: a flood of wrong passwords must not take the main thread. Behaviour, not speed (the figures are
// bench/auth-flood.mjs): compares run on a worker thread, at most MAX_CONCURRENT_COMPARES queued, a failing client
// backs off with 429 + Retry-After before any compare runs, and verified credentials are cached by a keyed hash.
import bcrypt from 'bcryptjs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { threadId } from 'node:worker_threads';
import { expect, it } from 'vitest';
import {
  BasicAuth,
  CACHE_TTL_MS,
  FREE_FAILURES,
  MAX_CONCURRENT_COMPARES,
} from '../../src/outputs/server/auth.js';
import { BcryptWorker, type Compare } from '../../src/outputs/server/bcrypt-pool.js';

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

function fakeReply() {
  const r = { status: 200, headers: {} as Record<string, string> };
  const reply = {
    code(c: number) {
      r.status = c;
      return reply;
    },
    header(k: string, v: string) {
      r.headers[k] = v;
      return reply;
    },
    type() {
      return reply;
    },
    async send() {
      return reply;
    },
  };
  return { r, reply: reply as unknown as FastifyReply };
}

const req = (authorization: string, ip = '10.0.0.1') =>
  ({ headers: { authorization }, ip }) as FastifyRequest;

/** A compare that checks for real but records each call (hashes are made at cost 4 to keep the test cheap). */
function countingCompare() {
  const calls: string[] = [];
  const compare: Compare = async (password, hash) => {
    calls.push(password);
    return { ok: await bcrypt.compare(password, hash), threadId };
  };
  return { calls, compare };
}

it('runs bcrypt compares on a worker thread, not the main one', async () => {
  const worker = new BcryptWorker();
  try {
    const hash = await bcrypt.hash('right', 4);
    const good = await worker.compare('right', hash);
    const bad = await worker.compare('wrong', hash);
    expect(good.ok).toBe(true);
    expect(bad.ok).toBe(false);
    expect(good.threadId).not.toBe(threadId);
    // A malformed hash fails closed rather than killing the worker.
    expect((await worker.compare('x', 'not-a-hash')).ok).toBe(false);
    expect((await worker.compare('right', hash)).ok).toBe(true);
  } finally {
    await worker.close();
  }
});

it('caps compares in flight: beyond the cap, 429 with Retry-After and no compare', async () => {
  const release: (() => void)[] = [];
  // Compares that do not finish until the test says so: the flood is "in progress".
  const compare: Compare = () =>
    new Promise((resolve) => release.push(() => resolve({ ok: false, threadId: -1 })));
  const auth = new BasicAuth({ compare });
  await auth.setUsers(new Map([['alice', await bcrypt.hash('right', 4)]]));
  const hook = auth.hook();
  // Each from its own address, so the per-client back-off is not what answers.
  const pending = Array.from({ length: MAX_CONCURRENT_COMPARES }, (_, i) => {
    const { r, reply } = fakeReply();
    const user = i % 2 === 0 ? 'alice' : 'mallory';
    return { r, done: hook(req(basic(user, `bad-${i}`), `10.0.1.${i}`), reply) };
  });
  for (const user of ['alice', 'nobody']) {
    const { r, reply } = fakeReply();
    await hook(req(basic(user, 'x'), '10.0.2.1'), reply);
    expect(r.status).toBe(429);
    expect(r.headers['Retry-After']).toBe('1');
  }
  expect(release).toHaveLength(MAX_CONCURRENT_COMPARES);
  for (const f of release) f();
  for (const p of pending) {
    await p.done;
    expect(p.r.status).toBe(401);
  }
});

it('a client that keeps failing backs off (429, growing Retry-After) before any compare; others and cached credentials pass', async () => {
  const clock = { now: 1_000_000 };
  const { calls, compare } = countingCompare();
  const auth = new BasicAuth({ compare, now: () => clock.now });
  await auth.setUsers(new Map([['alice', await bcrypt.hash('right', 4)]]));
  const hook = auth.hook();
  const attempt = async (authorization: string, ip = '10.0.0.1') => {
    const { r, reply } = fakeReply();
    await hook(req(authorization, ip), reply);
    return r;
  };
  // A scraper from the attacker's address verified once: its cached credentials keep passing through the flood.
  expect((await attempt(basic('alice', 'right'))).status).toBe(200);
  for (let i = 0; i < FREE_FAILURES; i++)
    expect((await attempt(basic('alice', `bad-${i}`))).status).toBe(401);
  expect(calls).toHaveLength(1 + FREE_FAILURES);
  // The next failure sets a 1 s back-off; until it passes, answers are 429 and no compare runs.
  expect((await attempt(basic('alice', 'bad-x'))).status).toBe(401);
  const blocked = await attempt(basic('nobody', 'bad-y'));
  expect(blocked.status).toBe(429);
  expect(blocked.headers['Retry-After']).toBe('1');
  expect(calls).toHaveLength(2 + FREE_FAILURES);
  expect((await attempt(basic('alice', 'right'))).status).toBe(200);
  // Another address is not affected.
  expect((await attempt(basic('alice', 'bad-z'), '10.0.0.2')).status).toBe(401);
  // After the back-off another failure doubles it.
  clock.now += 1000;
  // (New passwords: a repeat of one that already failed is answered from memory and not counted.)
  expect((await attempt(basic('alice', 'bad-again-1'))).status).toBe(401);
  expect((await attempt(basic('alice', 'bad-again-2'))).headers['Retry-After']).toBe('2');
  // The cache is short: past CACHE_TTL_MS the right password is compared again, and succeeds.
  clock.now += CACHE_TTL_MS;
  const before = calls.length;
  expect((await attempt(basic('alice', 'right'))).status).toBe(200);
  expect(calls.length).toBe(before + 1);
  expect((await attempt(basic('alice', 'bad-later'))).status).toBe(401);
});

it('caches verified credentials by a keyed hash: a second request costs no compare and the password is not kept', async () => {
  const { calls, compare } = countingCompare();
  const auth = new BasicAuth({ compare });
  await auth.setUsers(new Map([['alice', await bcrypt.hash('s3cret-pass', 4)]]));
  expect(await auth.verify({ user: 'alice', password: 's3cret-pass' })).toBe(true);
  expect(await auth.verify({ user: 'alice', password: 's3cret-pass' })).toBe(true);
  expect(calls).toHaveLength(1);
  const cache = (auth as unknown as { okCache: Map<string, number> }).okCache;
  expect([...cache.keys()].join()).not.toContain('s3cret-pass');
});

// Issue 24 item 13: the back-off is per address, and an address can be shared (NAT, a node's other pods, a second
// misconfigured scraper). One failing attempt every 20 s from it must not keep a valid scraper out.
it('a client failing every 20 s from a shared address does not lock out a valid scraper', async () => {
  const clock = { now: 1_000_000 };
  const { calls, compare } = countingCompare();
  const auth = new BasicAuth({ compare, now: () => clock.now });
  await auth.setUsers(new Map([['prom', await bcrypt.hash('scrape-pass', 4)]]));
  const hook = auth.hook();
  const attempt = async (authorization: string) => {
    const { r, reply } = fakeReply();
    await hook(req(authorization, '10.9.9.9'), reply);
    return r.status;
  };
  // The guesser (a new password each time, the scraper's own user) every 20 s: 10 minutes alone, then 30 more
  // with the scraper every 15 s beside it (its cache expires every minute, so it is compared again and again).
  const start = clock.now;
  const scraper: number[] = [];
  let guess = 0;
  for (let t = 0; t <= 40 * 60_000; t += 5_000) {
    clock.now = start + t;
    if (t % 20_000 === 0) await attempt(basic('prom', `guess-${guess++}`));
    if (t >= 10 * 60_000 && t % 15_000 === 0) scraper.push(await attempt(basic('prom', 'scrape-pass')));
  }
  expect(scraper.length).toBe(121);
  expect(scraper.filter((s) => s !== 200)).toEqual([]);
  // Every guess was compared and refused (none got in, none was free of bcrypt).
  expect(calls.filter((p) => p.startsWith('guess-'))).toHaveLength(guess);
  // Fast guessing from the same address still backs off (last round's flood protection) — and the scraper,
  // whose credentials verified before, passes through the back-off, even once its cache has expired.
  clock.now += CACHE_TTL_MS;
  const fast: number[] = [];
  for (let i = 0; i < FREE_FAILURES + 3; i++) fast.push(await attempt(basic('prom', `fast-${i}`)));
  expect(fast.slice(-2)).toEqual([429, 429]);
  const before = calls.length;
  expect(await attempt(basic('prom', 'scrape-pass'))).toBe(200);
  expect(calls.length).toBe(before + 1);
});

it('a repeated wrong password costs no compare and no back-off: a scraper never seen before still gets in', async () => {
  const clock = { now: 1_000_000 };
  const { calls, compare } = countingCompare();
  const auth = new BasicAuth({ compare, now: () => clock.now });
  await auth.setUsers(new Map([['prom', await bcrypt.hash('scrape-pass', 4)]]));
  const hook = auth.hook();
  const attempt = async (authorization: string) => {
    const { r, reply } = fakeReply();
    await hook(req(authorization, '10.9.9.9'), reply);
    return r.status;
  };
  // A stale password in a second scraper's config, every 20 s for 10 minutes.
  for (let i = 0; i < 30; i++) {
    expect(await attempt(basic('prom', 'old-pass'))).toBe(401);
    clock.now += 20_000;
  }
  expect(calls.filter((p) => p === 'old-pass')).toHaveLength(1);
  // The valid scraper's first ever attempt from the same address verifies.
  expect(await attempt(basic('prom', 'scrape-pass'))).toBe(200);
  // Repeats are remembered for FAILURE_MEMORY; each of many distinct guesses is still counted.
  for (let i = 0; i < FREE_FAILURES + 1; i++) expect(await attempt(basic('prom', `guess-${i}`))).toBe(401);
  expect(await attempt(basic('prom', 'guess-next'))).toBe(429);
});
