// @ts-check
// A wrong-password flood against basic auth (issue 16 item 6): probe TTFT and authenticated scrape latency, idle vs
// with 16 parallel callers sending wrong passwords as fast as they are answered. Target: flood within 10% of idle.
// The daemon (dist/) runs on the main thread, as in production; the engine (SSE, ~20 ms to the first token) and
// the callers (scraper + flood) run in worker threads with their own event loops, so their work does not land on
// the daemon's loop. Probes are the daemon's own chat probe, started back to back through its scheduler.
// BENCH_AUTH_MODE=mainthread puts bcrypt back on the main thread without the back-off (the "before" figures);
// BENCH_AUTH_MODE=worker-nobackoff keeps the worker and the cap but turns the back-off off.
// Run: npm run bench:auth-flood  (BENCH_PHASE_S=8 per phase by default)
import { Buffer } from 'node:buffer';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const PHASE_MS = Number(process.env.BENCH_PHASE_S ?? 8) * 1000;
const FLOODERS = 16;
const TTFT_MS = 20;
const PASSWORD = 'correct horse battery';

/** The port to the main thread: the engine and the callers run in worker threads. */
function toMain() {
  if (parentPort === null) throw new Error('auth-flood: this part runs in a worker thread');
  return parentPort;
}

function engine() {
  const up = toMain();
  /**
   * @param {Record<string, string>} delta
   * @param {string | null} [finish]
   */
  const chunk = (delta, finish = null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (!req.url?.startsWith('/v1/chat')) return res.end('ok');
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      setTimeout(() => {
        res.write(chunk({ role: 'assistant', content: 'O' }));
        res.write(chunk({ content: 'K' }, 'stop'));
        res.end('data: [DONE]\n\n');
      }, TTFT_MS);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address();
    if (addr === null || typeof addr === 'string') throw new Error('no TCP address for the engine');
    up.postMessage({ port: addr.port });
  });
}

async function callers() {
  const { request, Agent } = await import('undici');
  const up = toMain();
  /** @type {{ base: string, phaseMs: number }} */
  const { base, phaseMs } = workerData;
  const auth = (/** @type {string} */ u, /** @type {string} */ p) =>
    `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
  const scraper = new Agent({ keepAliveTimeout: 60_000, connections: 1 });
  const scrape = async (/** @type {number} */ until) => {
    /** @type {number[]} */
    const ms = [];
    while (performance.now() < until) {
      const t = performance.now();
      const r = await request(`${base}/metrics`, {
        dispatcher: scraper,
        headers: { authorization: auth('alice', PASSWORD) },
      });
      await r.body.text();
      if (r.statusCode !== 200) throw new Error(`scrape answered ${r.statusCode}`);
      ms.push(performance.now() - t);
      await new Promise((res) => setTimeout(res, 100));
    }
    return ms;
  };
  /** @type {Record<number, number>} */
  const answers = {};
  const flood = async (/** @type {number} */ until, /** @type {number} */ i) => {
    const agent = new Agent({ keepAliveTimeout: 60_000, connections: 1 });
    let n = 0;
    while (performance.now() < until) {
      const r = await request(`${base}/metrics`, {
        dispatcher: agent,
        headers: { authorization: auth(i % 2 ? 'alice' : `user${i}`, `wrong-${i}-${n++}`) },
      });
      await r.body.dump();
      answers[r.statusCode] = (answers[r.statusCode] ?? 0) + 1;
    }
    await agent.close();
  };
  up.on('message', async (m) => {
    const until = performance.now() + phaseMs;
    if (m === 'idle') up.postMessage({ phase: 'idle', scrape: await scrape(until) });
    if (m === 'flood') {
      const [ms] = await Promise.all([
        scrape(until),
        ...Array.from({ length: FLOODERS }, (_, i) => flood(until, i)),
      ]);
      up.postMessage({ phase: 'flood', scrape: ms, answers });
    }
  });
  up.postMessage({ ready: true });
}

if (!isMainThread) {
  if (workerData?.role === 'callers') await callers();
  else engine();
} else {
  const bcrypt = (await import('bcryptjs')).default;
  const { Daemon } = await import('../dist/daemon.js');
  const { createLogger } = await import('../dist/lib/logger.js');
  const dir = mkdtempSync(join(tmpdir(), 'ww-bench-auth-'));
  const eng = new Worker(new URL(import.meta.url), { workerData: { role: 'engine' } });
  /** @type {number} */
  const port = await new Promise((r) => eng.once('message', (m) => r(m.port)));
  const cfg = join(dir, 'wedgewatch.yaml');
  // The example config's cadence (examples/wedgewatch.yaml); the bench adds its own back-to-back runs.
  writeFileSync(
    cfg,
    `web: { listenAddress: "127.0.0.1:0" }
stateDir: ${dir}/state
targets:
  - name: t
    endpoints: [{ name: router, url: "http://127.0.0.1:${port}" }]
    probes:
      - { name: chat, kind: chat, every: 15s, timeout: 30s, conn: [fresh, keepalive] }
      - { name: health, kind: health, every: 10s, timeout: 5s, path: /health }
`,
  );
  const web = join(dir, 'web.yaml');
  writeFileSync(web, `basic_auth_users:\n  alice: ${JSON.stringify(await bcrypt.hash(PASSWORD, 10))}\n`);
  const d = new Daemon({ configPath: cfg, webConfigFile: web, logger: createLogger({ level: 'silent' }) });
  await d.start();
  const mode = process.env.BENCH_AUTH_MODE ?? 'worker';
  if (mode === 'mainthread') {
    // The code before the fix: bcryptjs's async compare on this thread, no back-off.
    d.web.auth.compare = async (/** @type {string} */ p, /** @type {string} */ h) => ({
      ok: await bcrypt.compare(p, h),
      threadId: 0,
    });
    d.web.auth.backoffMs = () => 0;
  }
  // The worker and the cap alone: every flood request is compared (or refused by the cap), never backed off.
  if (mode === 'worker-nobackoff') d.web.auth.backoffMs = () => 0;
  const callersW = new Worker(new URL(import.meta.url), {
    workerData: { role: 'callers', base: `http://${d.address()}`, phaseMs: PHASE_MS },
  });
  await new Promise((r) => callersW.once('message', r));
  const scheduler = d.runtime.probes.get('t');
  /** @param {Promise<unknown>} done */
  const probeWhile = async (done) => {
    /** @type {number[]} */
    const ttft = [];
    let finished = false;
    done.then(() => (finished = true));
    while (!finished) {
      for (const r of await scheduler.runNow({ probe: 'chat', conn: 'keepalive' })) {
        if (r.result !== 'ok') throw new Error(`probe ${r.result}: ${r.error ?? ''}`);
        ttft.push(r.ttftMs);
      }
      await new Promise((res) => setTimeout(res, 100));
    }
    return ttft;
  };
  /** What the callers send back at a phase's end. @typedef {{ scrape: number[], answers?: Record<number, number> }} Phase */
  const phase = async (/** @type {string} */ name) => {
    /** @type {Promise<Phase>} */
    const result = new Promise((r) => callersW.once('message', r));
    callersW.postMessage(name);
    const ttft = await probeWhile(result);
    return { ...(await result), ttft };
  };
  const pct = (/** @type {number[]} */ xs, /** @type {number} */ p) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
  };
  const row = (/** @type {string} */ label, /** @type {number[]} */ xs) =>
    `${label.padEnd(22)} n=${String(xs.length).padStart(4)}  p50 ${pct(xs, 50).toFixed(1).padStart(6)} ms  p90 ${pct(xs, 90).toFixed(1).padStart(6)} ms`;
  // Warm-up: the first runs pay for JIT and connection set-up.
  await scheduler.runNow({ probe: 'chat', conn: 'keepalive' });
  const idle = await phase('idle');
  const flood = await phase('flood');
  console.log(
    `auth flood bench (mode ${mode}): ${FLOODERS} parallel wrong-password callers, ${PHASE_MS / 1000} s per phase, engine TTFT ${TTFT_MS} ms, bcrypt cost 10`,
  );
  console.log(row('probe TTFT idle', idle.ttft));
  console.log(row('probe TTFT flood', flood.ttft));
  console.log(row('scrape (auth) idle', idle.scrape));
  console.log(row('scrape (auth) flood', flood.scrape));
  console.log(`flood answers by status: ${JSON.stringify(flood.answers)}`);
  const ratio = (/** @type {number[]} */ a, /** @type {number[]} */ b) => pct(b, 50) / pct(a, 50);
  const within = ratio(idle.ttft, flood.ttft) <= 1.1 && ratio(idle.scrape, flood.scrape) <= 1.1;
  console.log(
    `median flood/idle: TTFT ${ratio(idle.ttft, flood.ttft).toFixed(2)}, scrape ${ratio(idle.scrape, flood.scrape).toFixed(2)} → ${within ? 'within 10%' : 'OVER 10%'}`,
  );
  await callersW.terminate();
  await d.stop();
  await eng.terminate();
  process.exit(0);
}
