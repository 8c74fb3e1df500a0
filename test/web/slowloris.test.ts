// Issue 24 item 16: 520 connections that trickle their headers held every slot of the connection cap, and a scraper
// could not reach /metrics. The guard closes connections without a request in progress to make room, keeps one
// address to a share of the cap, and the headers timeout closes slow-header connections on its own.
import { connect, type Socket } from 'node:net';
import { Agent, request } from 'undici';
import { afterEach, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { connectionGuards, createServer } from '../../src/outputs/server/app.js';
import { perAddressLimit } from '../../src/outputs/server/connection-guard.js';
import { createMetrics } from '../../src/metrics.js';
import { waitFor } from '../helpers/wait.js';
import { capturingLogger } from '../helpers/logger.js';

const sockets: Socket[] = [];
let app: FastifyInstance | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await agent?.close();
  agent = undefined;
  await app?.close();
  app = undefined;
});

async function start(opts: { maxConnections: number; headersTimeoutMs?: number }) {
  app = await createServer({
    metrics: createMetrics(),
    logger: capturingLogger().logger,
    isReady: () => true,
    lifecycleEnabled: () => false,
    reload: async () => ({ ok: true, errors: [] }),
    maxConnections: opts.maxConnections,
    ...(opts.headersTimeoutMs !== undefined ? { headersTimeoutMs: opts.headersTimeoutMs } : {}),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const a = app.server.address();
  if (a === null || typeof a === 'string') throw new Error('no address');
  return a.port;
}

/** A connection that sends the start of a request and never finishes its headers. */
async function slowHeaders(port: number, localAddress = '127.0.0.1') {
  const s = connect({ port, host: '127.0.0.1', localAddress });
  const state = { closed: false };
  s.on('error', () => {});
  s.on('close', () => (state.closed = true));
  // Read whatever the server answers (a 408), so its end of the stream is seen and the socket closes.
  s.resume();
  sockets.push(s);
  await new Promise<void>((resolve) => s.once('connect', () => resolve()));
  s.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
  return state;
}

it('a scrape answers while cap + 20 slow-header connections are open; the slow ones give way', async () => {
  const max = 16;
  const port = await start({ maxConnections: max, headersTimeoutMs: 25_000 });
  const slow: Array<{ closed: boolean }> = [];
  for (let i = 0; i < max + 20; i++) slow.push(await slowHeaders(port));
  // All from one address: at most its share of the cap stays open (the oldest closed to make room).
  await waitFor(() => slow.filter((s) => !s.closed).length <= perAddressLimit(max), {
    what: 'slow connections beyond the per-address share to be closed',
  });
  agent = new Agent({ headersTimeout: 5_000, bodyTimeout: 5_000, connect: { timeout: 5_000 } });
  const res = await request(`http://127.0.0.1:${port}/metrics`, { dispatcher: agent });
  expect(res.statusCode).toBe(200);
  expect(await res.body.text()).toContain('wedgewatch_');
  // The headers timeout was long here: what made room was the guard, not the timeout.
  expect(connectionGuards.get(app!)!.evicted).toBeGreaterThanOrEqual(20);
});

it("one address's flood does not close another address's connections", async () => {
  const max = 16;
  const port = await start({ maxConnections: max, headersTimeoutMs: 25_000 });
  // A client on 127.0.0.2 holds a connection (its headers not yet sent, so it is idle, the most closable kind).
  const other = await slowHeaders(port, '127.0.0.2');
  const flood: Array<{ closed: boolean }> = [];
  for (let i = 0; i < max + 20; i++) flood.push(await slowHeaders(port));
  await waitFor(() => flood.filter((s) => !s.closed).length <= perAddressLimit(max), {
    what: 'the flood to be held to its share',
  });
  expect(other.closed).toBe(false);
});

it('a connection that has not sent its headers within headersTimeout is closed', async () => {
  const port = await start({ maxConnections: 64, headersTimeoutMs: 300 });
  const slow = await slowHeaders(port);
  await waitFor(() => slow.closed, {
    what: 'the server to close the slow-header connection',
    timeoutMs: 5_000,
  });
  expect(connectionGuards.get(app!)!.evicted).toBe(0);
});
