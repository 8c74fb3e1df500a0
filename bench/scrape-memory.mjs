// @ts-check
// Engine /metrics parsing under an adversarial body (issue 24 #7): a body of series with long label values, as a
// router exports for user-chosen paths, served on 127.0.0.1 to the real EngineScraper (dist/). Each size runs in
// its own child process (so its peak RSS is its own, not the server's or another size's): a warm-up scrape of a
// small normal body, then SCRAPES scrapes of the adversarial body; it prints the peak RSS growth over the warm-up
// and the longest event-loop stall seen by a 5 ms timer. Bounded: 3 scrapes per size, a 20 s cap per child.
// Run: npm run build && node bench/scrape-memory.mjs   (WW_DIST=/other/dist measures another build, e.g. main's)
import { Buffer } from 'node:buffer';
import { fork } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { clearInterval, clearTimeout, setInterval } from 'node:timers';

const SIZES_MB = [4, 15.5];
const SCRAPES = 3;
const CHILD_CAP_MS = 20_000;
const self = fileURLToPath(import.meta.url);
const dist = process.env.WW_DIST ?? fileURLToPath(new URL('../dist/', import.meta.url));

/** Series of engine families the mappings read, each with a 4 KB label value (quotes escaped every 512 chars). */
/** @param {number} bytes */
function adversarialBody(bytes) {
  const long = ('x'.repeat(511) + '\\"').repeat(8);
  const lines = [];
  let size = 0;
  for (let i = 0; ; i++) {
    const line =
      i % 2 === 0
        ? `smg_http_responses_total{path="/v1/${long}${i}",status_code="200"} 1\n`
        : `vllm:num_requests_running{model_name="${long}${i}",engine="0"} 1\n`;
    if (size + line.length > bytes) break;
    lines.push(line);
    size += line.length;
  }
  // Whole lines only: a body cut inside a line is (rightly) a failed scrape.
  return lines.join('');
}

/**
 * What a child sends back: its figures, or why it sent none.
 * @typedef {{ first: number, peak: number, more: number, maxLag: number, cpuMs: number, ms: number, ok: boolean[] }} Done
 * @typedef {Done | { failed: string }} Result
 * @typedef {{ mb: number, body: number, floor: number }} Size
 */

/** To the parent over IPC: this file runs as a forked child in its `floor` and `child` modes. */
const send = (/** @type {unknown} */ m) => {
  if (!process.send) throw new Error('scrape-memory: a child mode runs forked, with an IPC channel');
  process.send(m);
};

const NORMAL =
  'vllm:num_requests_running{model_name="m",engine="0"} 1\nvllm:generation_tokens_total{model_name="m",engine="0"} 9\n';

/** Peak RSS growth of `fn` over what the process held before it (its earlier peak, if higher). */
/** @param {() => Promise<unknown>} fn */
async function peakGrowth(fn) {
  const before = Math.max(process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024);
  await fn();
  return process.resourceUsage().maxRSS * 1024 - before;
}

if (process.argv[2] === 'floor') {
  // The transport alone: the same body read through undici and dropped. Its garbage (chunk buffers not yet
  // collected) is RSS any reader of the body pays; the parser's own cost is what the scrape adds over it.
  const { request, Agent } = await import(pathToFileURL(`${dist}/lib/http/undici.js`).href);
  const agent = new Agent({ connections: 1 });
  const read = async (/** @type {string} */ path) => {
    const res = await request(process.argv[3] + path, { dispatcher: agent });
    for await (const _chunk of res.body);
  };
  await read('/normal');
  send({ first: await peakGrowth(() => read('/adversarial')) });
  process.exit(0);
} else if (process.argv[2] === 'child') {
  const [url] = process.argv.slice(3);
  const { EngineScraper } = await import(pathToFileURL(`${dist}/sources/engines/scrape.js`).href);
  const { createEngineMetrics } = await import(pathToFileURL(`${dist}/metrics.js`).href);
  const { engineScrapeSchema } = await import(pathToFileURL(`${dist}/config/schema.js`).href);
  const { default: client } = await import('prom-client');
  const { default: pino } = await import('pino');
  const mk = (/** @type {string} */ path) => {
    /** @type {{ scrapeOk: boolean }[]} */
    const got = [];
    const s = new EngineScraper({
      target: 't',
      engine: engineScrapeSchema.parse({
        service: 'decode',
        metrics: url + path,
        every: '1h',
        timeout: '15s',
      }),
      metrics: createEngineMetrics(new client.Registry()),
      logger: pino({ level: 'silent' }),
      onEngine: (/** @type {{ scrapeOk: boolean }} */ e) => got.push(e),
    });
    return { s, got };
  };
  const warm = mk('/normal');
  await warm.s.scrapeOnce();
  await warm.s.stop();
  let maxLag = 0;
  let last = performance.now();
  const tick = setInterval(() => {
    const t = performance.now();
    maxLag = Math.max(maxLag, t - last - 5);
    last = t;
  }, 5);
  const adv = mk('/adversarial');
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const first = await peakGrowth(() => adv.s.scrapeOnce());
  const all = await peakGrowth(async () => {
    for (let i = 1; i < SCRAPES; i++) await adv.s.scrapeOnce();
  });
  const ms = (performance.now() - t0) / SCRAPES;
  const cpu = process.cpuUsage(cpu0);
  // CPU per scrape: less at the mercy of other load on the machine than wall time and lag are.
  const cpuMs = (cpu.user + cpu.system) / 1000 / SCRAPES;
  clearInterval(tick);
  await adv.s.stop();
  send({
    first,
    peak: process.resourceUsage().maxRSS * 1024,
    more: all,
    maxLag,
    cpuMs,
    ms,
    ok: adv.got.map((g) => g.scrapeOk),
  });
  process.exit(0);
} else {
  /**
   * @param {string} mode
   * @param {string} url
   * @returns {Promise<Result>}
   */
  const run = (mode, url) =>
    new Promise((resolve) => {
      const child = fork(self, [mode, url], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      const cap = setTimeout(() => child.kill('SIGKILL'), CHILD_CAP_MS);
      child.once('message', (m) => {
        clearTimeout(cap);
        resolve(/** @type {Result} */ (m));
      });
      child.once('exit', (code, sig) => {
        clearTimeout(cap);
        resolve({ failed: `child exited ${code ?? sig}` });
      });
    });
  /** @type {((Size & Done) | (Size & { failed: string }))[]} */
  const results = [];
  for (const mb of SIZES_MB) {
    const body = Buffer.from(adversarialBody(Math.round(mb * 1024 * 1024)));
    const server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      res.end(req.url === '/normal' ? NORMAL : body);
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
    const addr = server.address();
    if (addr === null || typeof addr === 'string') throw new Error('no TCP address for the metrics server');
    const url = `http://127.0.0.1:${addr.port}`;
    const floor = await run('floor', url);
    const r = await run('child', url);
    await new Promise((r2) => server.close(() => r2(undefined)));
    results.push({ mb, body: body.length, floor: 'first' in floor ? floor.first : NaN, ...r });
  }
  const MB = (/** @type {number} */ b) => (b / 1024 / 1024).toFixed(1);
  console.log(`dist: ${dist}`);
  console.log(
    '| body | RSS growth, 1st scrape | × body | transport alone | peak RSS after 3 | max event-loop lag | ms per scrape (CPU) | scrapeOk |',
  );
  console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const r of results) {
    if ('failed' in r) {
      console.log(`| ${r.mb} MB | ${r.failed} | | | | | | |`);
      continue;
    }
    console.log(
      `| ${r.mb} MB | ${MB(r.first)} MB | ${(r.first / r.body).toFixed(2)}× | ${MB(r.floor)} MB | ${MB(r.peak)} MB | ${r.maxLag.toFixed(0)} ms | ${r.ms.toFixed(0)} (${r.cpuMs.toFixed(0)}) | ${r.ok.join(',')} |`,
    );
  }
}
