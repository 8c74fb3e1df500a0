// @ts-check
// A chat probe's own overhead: client wall time minus the time the server spent on the request.
// The SSE server runs in a worker thread (its own event loop) and reports, per request, the time from its
// 'request' event to res.end(). Target: median overhead under 2 ms. Run: npm run bench:probe
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort } from 'node:worker_threads';

const RUNS = Number(process.env.BENCH_RUNS ?? 2000);
const WARMUP = 200;
const TARGET_MS = 2;

function sseBody() {
  /**
   * @param {Record<string, string>} delta
   * @param {string | null} [finish]
   */
  const chunk = (delta, finish = null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const parts = [chunk({ role: 'assistant', content: '' })];
  for (let i = 0; i < 8; i++) parts.push(chunk({ content: `t${i}` }));
  parts.push(chunk({}, 'length'));
  parts.push(
    `data: ${JSON.stringify({ id: 'c', choices: [], usage: { prompt_tokens: 5, completion_tokens: 8, total_tokens: 13 } })}\n\n`,
  );
  parts.push('data: [DONE]\n\n');
  return parts;
}

if (!isMainThread) {
  const port = parentPort;
  if (port === null) throw new Error('the SSE server runs in a worker thread');
  const parts = sseBody();
  const server = http.createServer((req, res) => {
    const t0 = performance.now();
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Written one by one, as an engine streams tokens (each write is its own chunk on the wire).
      for (const p of parts) res.write(p);
      res.end();
      port.postMessage({ id: req.headers['x-bench-id'], serverMs: performance.now() - t0 });
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address();
    if (addr === null || typeof addr === 'string') throw new Error('no TCP address for the SSE server');
    port.postMessage({ port: addr.port });
  });
} else {
  const { EndpointDispatchers, tlsOptions } = await import('../dist/sources/probes/http.js');
  const { runProbe } = await import('../dist/sources/probes/runner.js');
  const { endpointSchema, probeSchema } = await import('../dist/config/schema.js');

  const worker = new Worker(new URL(import.meta.url));
  /** @type {Map<string, number>} */
  const serverMs = new Map();
  /** @type {Map<string, () => void>} */
  const waiting = new Map();
  /** @type {number} */
  const port = await new Promise((resolve) => {
    worker.on('message', (/** @type {{ port?: number, id: string, serverMs: number }} */ m) => {
      if (m.port) return resolve(m.port);
      serverMs.set(m.id, m.serverMs);
      waiting.get(m.id)?.();
    });
  });
  const endpoint = endpointSchema.parse({ name: 'bench', url: `http://127.0.0.1:${port}` });
  const hop = new EndpointDispatchers(endpoint, tlsOptions(endpoint));
  const probe = probeSchema.parse({ name: 'chat', kind: 'chat', every: '15s', timeout: '10s' });

  let seq = 0;
  /** @param {string} conn */
  async function once(conn) {
    const id = String(++seq);
    const reported = new Promise((r) => waiting.set(id, () => r(undefined)));
    const t0 = performance.now();
    const { signal } = await runProbe({
      target: 'b',
      model: 'm',
      probe,
      hop,
      conn,
      headers: { 'x-bench-id': id },
    });
    const clientMs = performance.now() - t0;
    if (signal.result !== 'ok')
      throw new Error(
        `bench probe failed: ${signal.result} ${/** @type {{ error?: string }} */ (signal).error ?? ''}`,
      );
    await reported;
    waiting.delete(id);
    const s = serverMs.get(id) ?? NaN;
    serverMs.delete(id);
    return { clientMs, serverMs: s, overheadMs: clientMs - s };
  }

  const pct = (/** @type {number[]} */ xs, /** @type {number} */ p) =>
    xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
  const fmt = (/** @type {number} */ x) => x.toFixed(3).padStart(7);
  let failed = false;
  console.log(
    `chat probe overhead, ${RUNS} runs per connection kind (8 tokens, loopback SSE server in a worker)`,
  );
  console.log('conn       | median client | median server | overhead p50 | p90     | p99     | max');
  for (const conn of ['keepalive', 'fresh']) {
    for (let i = 0; i < WARMUP; i++) await once(conn);
    const rows = [];
    for (let i = 0; i < RUNS; i++) rows.push(await once(conn));
    const over = rows.map((r) => r.overheadMs).sort((a, b) => a - b);
    const client = rows.map((r) => r.clientMs).sort((a, b) => a - b);
    const server = rows.map((r) => r.serverMs).sort((a, b) => a - b);
    console.log(
      `${conn.padEnd(10)} | ${fmt(pct(client, 50))} ms    | ${fmt(pct(server, 50))} ms    | ${fmt(pct(over, 50))} ms   | ${fmt(pct(over, 90))} | ${fmt(pct(over, 99))} | ${fmt(over[over.length - 1])}`,
    );
    if (pct(over, 50) >= TARGET_MS) failed = true;
  }
  console.log(
    `(fresh includes opening a TCP connection; overhead = client wall time − server time, target median < ${TARGET_MS} ms)`,
  );
  console.log(failed ? 'RESULT: over target' : 'RESULT: under target');
  await hop.close();
  await worker.terminate();
  process.exitCode = failed ? 1 : 0;
}
