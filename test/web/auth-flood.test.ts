import bcrypt from 'bcryptjs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { afterEach, expect, it, vi } from 'vitest';
import { BasicAuth, MAX_CONCURRENT_COMPARES } from '../../src/server/auth.js';

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

afterEach(() => vi.restoreAllMocks());

it('caps bcrypt compares in flight: a flood of bad passwords gets 429, not the CPU', async () => {
  const auth = new BasicAuth();
  await auth.setUsers(new Map([['alice', await bcrypt.hash('right', 4)]]));
  // Compares that do not finish until the test says so: the flood is "in progress".
  const release: (() => void)[] = [];
  vi.spyOn(bcrypt, 'compare').mockImplementation(
    () => new Promise<boolean>((resolve) => release.push(() => resolve(false))),
  );
  const hook = auth.hook();
  const pending = Array.from({ length: MAX_CONCURRENT_COMPARES }, (_, i) => {
    const { r, reply } = fakeReply();
    const user = i % 2 === 0 ? 'alice' : 'mallory';
    const done = hook({ headers: { authorization: basic(user, `bad-${i}`) } } as FastifyRequest, reply);
    return { r, done };
  });
  // One more, for a known and for an unknown user alike: refused at once with 429 and Retry-After.
  for (const user of ['alice', 'nobody']) {
    const { r, reply } = fakeReply();
    await hook({ headers: { authorization: basic(user, 'x') } } as FastifyRequest, reply);
    expect(r.status).toBe(429);
    expect(r.headers['Retry-After']).toBe('1');
  }
  expect(release).toHaveLength(MAX_CONCURRENT_COMPARES);
  for (const f of release) f();
  for (const p of pending) {
    await p.done;
    expect(p.r.status).toBe(401);
  }
  // The slots are free again.
  vi.restoreAllMocks();
  const { r, reply } = fakeReply();
  await hook({ headers: { authorization: basic('alice', 'right') } } as FastifyRequest, reply);
  expect(r.status).toBe(200);
});
