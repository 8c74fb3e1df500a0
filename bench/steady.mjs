// @ts-check
// bench:steady — what the daemon costs while nothing is wrong. The simulator (SGLang PD behind a keep-alive proxy)
// runs in its own process; the daemon (`node dist/cli.js run`) watches it at the example config's cadence: chat
// every 15 s over fresh and keep-alive connections, toolcall every 60 s, health every 10 s, through two hops
// (proxy, router); prefill and decode logs followed; both engines scraped every 5 s. After a warm-up, the daemon's
// RSS and CPU are sampled from /proc and /metrics is scraped every 15 s (as Prometheus would) for its time and
// nodejs_eventloop_lag_p99_seconds; at the end, the kernel's peak RSS (VmHWM), RssAnon/RssFile and V8 heap used.
// Then the same with 50 such targets. Prints figures; asserts nothing.
//   npm run bench:steady        WARMUP_S=20 SAMPLE_S=60 TARGETS=1,50   WEDGEWATCH_ROOT=<another build to compare>
//   PARTS=probes,logs,engines: what each target watches (default all three; one at a time tells their costs apart);
//   add `node` for the node source reading the simulator's process from /proc every 5 s (issue 42)
//   METRICS_OUT=FILE: write the last /metrics text (Prometheus text format) to FILE.<targets>, to see what it holds
//   DAEMON_NODE_ARGS: node flags for the daemon, default the shipped ones; '' for none; add
//   '--cpu-prof --cpu-prof-dir=/tmp/prof' to profile it (SIGTERM at the end writes the profile)
//   HEAPSNAPSHOT_DIR=DIR: at the end of the sampled window the daemon writes a V8 heap snapshot into DIR (it runs with
//   --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=DIR added), to compare what two builds retain (Chrome DevTools'
//   Memory tab, or any .heapsnapshot reader)
import { spawn } from 'node:child_process';
import { get as httpGet } from 'node:http';
import {
  appendFileSync,
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { freePort, sleep, track, until } from './lib/index.mjs';

/* global fetch, Buffer */
const ROOT = resolve(process.env.WEDGEWATCH_ROOT ?? fileURLToPath(new URL('..', import.meta.url)));
const CLI = join(ROOT, 'dist/cli.js');
const WARMUP_S = Number(process.env.WARMUP_S ?? 20);
const SAMPLE_S = Number(process.env.SAMPLE_S ?? 60);
const TARGET_COUNTS = (process.env.TARGETS ?? '1,50').split(',').map(Number);
const SCRAPE_EVERY_S = 15;
const PARTS = new Set((process.env.PARTS ?? 'probes,logs,engines').split(','));
const CLK_TCK = 100; // Linux USER_HZ: /proc/PID/stat times are in 1/100 s
/** @type {Record<number, { rssMb: number, cpuPct: number, scrapeMs?: number }>} */
const GOALS = { 1: { rssMb: 70, cpuPct: 0.5 }, 50: { rssMb: 150, cpuPct: 5, scrapeMs: 50 } };

// The daemon runs as systemd/wedgewatch.service and the Dockerfile run it, and as the CLI sets on itself when started
// without them (src/node-flags.ts; test/ops/node-flags.test.ts keeps the four the same): 1 MB semi-spaces and 30% old-space growth instead of V8's defaults, and WebAssembly (undici's
// llhttp) on the baseline compiler only; bytecode is kept for code that runs every 10–60 s (docs/decisions.md).
const SHIPPED_NODE_ARGS =
  '--max-semi-space-size=1 --heap-growing-percent=30 --liftoff-only --no-flush-bytecode';
const HEAPSNAPSHOT_DIR = process.env.HEAPSNAPSHOT_DIR;
const DAEMON_NODE_ARGS = [
  ...(process.env.DAEMON_NODE_ARGS ?? SHIPPED_NODE_ARGS).split(' ').filter(Boolean),
  ...(HEAPSNAPSHOT_DIR
    ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${resolve(HEAPSNAPSHOT_DIR)}`]
    : []),
];

/**
 * @param {string[]} args
 * @param {string} name
 * @param {string[]} [nodeArgs]
 */
function start(args, name, nodeArgs = []) {
  const child = spawn(process.execPath, [...nodeArgs, CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  track(child);
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d) => out.stdout.length < 100_000 && (out.stdout += d));
  child.stderr.on('data', (d) => (out.stderr = (out.stderr + d).slice(-4000)));
  child.on('exit', (code, sig) => {
    if (!stopping.has(child)) console.error(`${name} exited early (${code ?? sig}): ${out.stderr}`);
  });
  return { child, out };
}
/** @type {Set<import('node:child_process').ChildProcess>} */
const stopping = new Set();
/** @param {import('node:child_process').ChildProcess} child */
async function stop(child) {
  stopping.add(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([gone, sleep(10_000)]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** CPU seconds of the main thread and of all the others (V8's GC helpers, libuv's pool), from /proc. */
/** @param {number} pid */
function threads(pid) {
  let main = 0;
  let other = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const s = (Number(f[11]) + Number(f[12])) / CLK_TCK;
      if (Number(tid) === pid) main += s;
      else other += s;
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return { main, other };
}

/** A field of /proc/PID/status in MB (NaN when absent). @param {string} status @param {string} name */
const statusMb = (status, name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1]) / 1024;

/** @param {number} pid */
function proc(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return {
    cpuS: (Number(f[11]) + Number(f[12])) / CLK_TCK,
    rssMb: statusMb(status, 'VmRSS'),
    anonMb: statusMb(status, 'RssAnon'),
    fileMb: statusMb(status, 'RssFile'),
    hwmMb: statusMb(status, 'VmHWM'), // the kernel's peak RSS, between our samples too
  };
}

// One simulated deployment serves every target, but 50 real deployments write 50 pairs of logs, each with its own
// traffic. Following the simulator's two files from 50 targets would read every line 50 times (2,500 times one
// target's log work, where 50 deployments make 50 times). So with more than one target the bench deals the
// simulator's lines out in turn to a pair of files per target: each file grows at about one target's rate.
/** @typedef {{ router: string, proxy: string, prefill: string, decode: string, logs: string }} SimUrls */
const logDir = (/** @type {SimUrls} */ sim, /** @type {number} */ n, /** @type {number} */ i) =>
  n === 1 ? sim.logs : join(sim.logs, `t${i}`);

/** Copies each new line of `src` to one of `dsts` in turn; returns a stop function. */
/**
 * @param {string} src
 * @param {string[]} dsts
 */
function dealLines(src, dsts) {
  let offset = 0;
  let next = 0;
  const timer = setInterval(() => {
    let text;
    try {
      const fd = openSync(src, 'r');
      try {
        const size = fstatSync(fd).size;
        if (size <= offset) return;
        const buf = Buffer.allocUnsafe(size - offset);
        const got = readSync(fd, buf, 0, buf.length, offset);
        // Whole lines only (a partial one is read again next time), so no character is cut either.
        const end = buf.subarray(0, got).lastIndexOf(10) + 1;
        offset += end;
        text = buf.subarray(0, end).toString('utf8');
      } finally {
        closeSync(fd);
      }
    } catch {
      return; // not written yet
    }
    const lines = text.split('\n');
    lines.pop(); // after the last newline: empty
    /** @type {string[][]} */
    const out = dsts.map(() => []);
    for (const l of lines) {
      out[next]?.push(`${l}\n`);
      next = (next + 1) % dsts.length;
    }
    out.forEach((ls, i) => ls.length > 0 && appendFileSync(dsts[i] ?? '', ls.join('')));
  }, 100);
  return () => clearInterval(timer);
}

/**
 * @param {SimUrls} sim
 * @param {number} n
 * @param {string} stateDir
 * @param {number} port
 */
function config(sim, n, stateDir, port) {
  const target = (/** @type {number} */ i) => `
  - name: pd-${i}
    model: sim-model
    endpoints:
      - { name: proxy, url: '${sim.proxy}' }
      - { name: router, url: '${sim.router}' }
    probes:${
      PARTS.has('probes')
        ? `
      - { name: chat, kind: chat, every: 15s, jitter: 0.1, timeout: 30s, maxTokens: 8, conn: [fresh, keepalive] }
      - { name: tools, kind: toolcall, every: 1m, timeout: 60s, endpoints: [router] }
      - { name: health, kind: health, every: 10s, timeout: 5s, path: /health }`
        : ' []'
    }
    logs:${
      PARTS.has('logs')
        ? `
      - { service: prefill, path: '${logDir(sim, n, i)}/prefill.log', packs: [sglang, nixl, python] }
      - { service: decode, path: '${logDir(sim, n, i)}/decode.log', packs: [sglang, nixl, python] }`
        : ' []'
    }
    engines:${
      PARTS.has('engines')
        ? `
      - { service: decode, metrics: '${sim.decode}/metrics', every: 5s, timeout: 3s }
      - { service: prefill, metrics: '${sim.prefill}/metrics', every: 5s, timeout: 3s }`
        : ' []'
    }${
      PARTS.has('node')
        ? `
    node:
      every: 5s
      processes:
        - { service: prefill, pidFile: '${sim.logs}/prefill.pid' }
        - { service: decode, pidFile: '${sim.logs}/decode.pid' }`
        : ''
    }`;
  return `web: { listenAddress: '127.0.0.1:${port}' }\nstateDir: ${stateDir}\ntargets:${Array.from({ length: n }, (_, i) => target(i)).join('')}\n`;
}

// What Prometheus sends (scrape/scrape.go's acceptHeader, OpenMetrics first; gzip): every real scrape is
// OpenMetrics, gzipped. `bytes` is what the daemon wrote before compression.
const PROMETHEUS_HEADERS = {
  accept:
    'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1',
  'accept-encoding': 'gzip',
};

/**
 * One scrape: the time from request to the body's last byte as the daemon sends it (gzip, not inflated: inflating
 * and parsing are the scraper's work, and a JavaScript client's cold code every 15 s would be counted as ours), and
 * the daemon's CPU across it when `pid` is given (in 10 ms ticks, and other work).
 */
/**
 * @param {string} base
 * @param {number} [pid]
 */
async function scrape(base, pid) {
  const c = pid === undefined ? 0 : proc(pid).cpuS;
  const t = performance.now();
  // Generous: 50 targets starting on a loaded 2-core machine can hold the first scrape for seconds.
  /** @type {{ body: Buffer, gzipped: boolean }} */
  const { body, gzipped } = await new Promise((resolveBody, reject) => {
    const req = httpGet(`${base}/metrics`, { headers: PROMETHEUS_HEADERS, timeout: 60_000 }, (res) => {
      /** @type {Buffer[]} */
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () =>
        resolveBody({ body: Buffer.concat(chunks), gzipped: res.headers['content-encoding'] === 'gzip' }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('scrape timed out')));
    req.on('error', reject);
  });
  const ms = performance.now() - t;
  const cpuMs = pid === undefined ? NaN : (proc(pid).cpuS - c) * 1000;
  const text = (gzipped ? gunzipSync(body) : body).toString('utf8');
  const lag = Number(/^nodejs_eventloop_lag_p99_seconds (\S+)$/m.exec(text)?.[1]) * 1000;
  const mb = (/** @type {string} */ name) =>
    Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]) / 2 ** 20;
  const anonMb = pid === undefined ? NaN : proc(pid).anonMb;
  return {
    ms,
    cpuMs,
    lagMs: lag,
    bytes: text.length,
    heapMb: mb('nodejs_heap_size_used_bytes'),
    heapTotalMb: mb('nodejs_heap_size_total_bytes'),
    externalMb: mb('nodejs_external_memory_bytes'),
    oldTotalMb: mb('nodejs_heap_space_size_total_bytes\\{space="old"\\}'),
    largeTotalMb: mb('nodejs_heap_space_size_total_bytes\\{space="large_object"\\}'),
    anonMb,
  };
}

const pct = (/** @type {number[]} */ xs, /** @type {number} */ p) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const max = (/** @type {number[]} */ xs) => Math.max(...xs);

/** @param {number} n */
async function scenario(n) {
  const dir = mkdtempSync(join(tmpdir(), 'wedgewatch-steady-'));
  mkdirSync(join(dir, 'sim'));
  const sim = start(['sim', '--proxy', '--log-dir', join(dir, 'sim')], 'sim');
  const urls = await until('the simulator', () => {
    const u = (/** @type {string} */ k) =>
      new RegExp(`^\\s+${k}\\s+(http://\\S+)$`, 'm').exec(sim.out.stdout)?.[1];
    const [router, proxy, prefill, decode] = ['router', 'proxy', 'prefill', 'decode'].map(u);
    /** @type {SimUrls | undefined} */
    const got =
      router && proxy && prefill && decode
        ? { router, proxy, prefill, decode, logs: join(dir, 'sim') }
        : undefined;
    return got;
  });
  /** @type {(() => void)[]} */
  const dealers = [];
  if (n > 1)
    for (const f of ['prefill.log', 'decode.log']) {
      const dsts = Array.from({ length: n }, (_, i) => {
        mkdirSync(logDir(urls, n, i), { recursive: true });
        return join(logDir(urls, n, i), f);
      });
      dealers.push(dealLines(join(urls.logs, f), dsts));
    }
  const port = await freePort();
  const cfg = join(dir, 'wedgewatch.yaml');
  writeFileSync(cfg, config(urls, n, join(dir, 'state'), port));
  const base = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const daemon = start(['run', '-c', cfg, '--log.level', 'warn'], 'daemon', DAEMON_NODE_ARGS);
  await until('the daemon', () =>
    fetch(`${base}/-/ready`).then(
      (r) => r.ok,
      () => false,
    ),
  );
  const readyS = (performance.now() - t0) / 1000;
  const pid = daemon.child.pid;
  if (pid === undefined) throw new Error('the daemon has no pid: it did not start');
  const rssStart = proc(pid).rssMb;
  const rss = [rssStart];
  const sampleRss = setInterval(() => rss.push(proc(pid).rssMb), 1000);
  await sleep(WARMUP_S * 1000);
  await scrape(base); // resets the event-loop histogram: lag figures cover the sampled window only
  const c0 = proc(pid).cpuS;
  const rssSampleStart = rss.length; // the samples from here on are the sampled window's
  const t0s = threads(pid);
  const w0 = performance.now();
  const scrapes = [];
  const sampleEnd = Date.now() + SAMPLE_S * 1000;
  while (Date.now() < sampleEnd) {
    await sleep(Math.min(SCRAPE_EVERY_S * 1000, sampleEnd - Date.now()));
    scrapes.push(await scrape(base, pid));
  }
  const end = proc(pid);
  const cpuS = end.cpuS - c0;
  const t1s = threads(pid);
  const cpuPct = (100 * cpuS) / ((performance.now() - w0) / 1000);
  clearInterval(sampleRss);
  const last = await fetch(`${base}/metrics`).then((r) => r.text());
  if (process.env.METRICS_OUT) writeFileSync(`${process.env.METRICS_OUT}.${n}`, last);
  const probesRun = [...last.matchAll(/^wedgewatch_probe_duration_seconds_count\{[^}]*\} (\d+)$/gm)].reduce(
    (s, m) => s + Number(m[1]),
    0,
  );
  const heapUsedMb = Number(/^nodejs_heap_size_used_bytes (\S+)$/m.exec(last)?.[1]) / 2 ** 20;
  if (HEAPSNAPSHOT_DIR) {
    const snaps = () => readdirSync(HEAPSNAPSHOT_DIR).filter((f) => f.endsWith('.heapsnapshot'));
    const before = snaps().length;
    process.kill(pid, 'SIGUSR2');
    // Node writes the snapshot on the daemon's main thread: once the file is there and the daemon answers again,
    // it is whole.
    await until('the heap snapshot', () => snaps().length > before, { timeoutMs: 120_000 });
    await until(
      'the daemon after its snapshot',
      () =>
        fetch(`${base}/-/ready`).then(
          (r) => r.ok,
          () => false,
        ),
      {
        timeoutMs: 120_000,
      },
    );
  }
  await stop(daemon.child);
  await stop(sim.child);
  for (const d of dealers) d();
  rmSync(dir, { recursive: true, force: true });
  const goal = GOALS[n];
  const mark = (/** @type {number} */ v, /** @type {number | undefined} */ g) =>
    g === undefined ? '' : v <= g ? ` (goal ≤ ${g}: met)` : ` (goal ≤ ${g}: MISSED)`;
  console.log(
    `${n} target(s)${PARTS.size < 3 ? ` watching ${[...PARTS].join('+')} only` : ''}, ${WARMUP_S} s warm-up, ${SAMPLE_S} s sampled (ready in ${readyS.toFixed(1)} s, ${probesRun} probe runs):`,
  );
  console.log(
    `  RSS start ${rssStart.toFixed(0)} MB, max ${max(rss).toFixed(0)} MB${mark(max(rss), goal?.rssMb)}, peak (VmHWM) ${end.hwmMb.toFixed(0)} MB`,
  );
  console.log(
    `  at the end: RSS ${end.rssMb.toFixed(0)} MB = RssAnon ${end.anonMb.toFixed(0)} MB + RssFile ${end.fileMb.toFixed(0)} MB, V8 heap used ${heapUsedMb.toFixed(1)} MB`,
  );
  // A level or growth: the sampled window's RSS in its first and last tenth, and V8's heap used at each scrape
  // (garbage included: it moves with the GC's cycle; its low points are what the heap holds).
  const win = rss.slice(rssSampleStart);
  const tenth = Math.max(1, Math.floor(win.length / 10));
  const mean = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const heaps = scrapes.map((s) => s.heapMb);
  const series = (/** @type {number[]} */ xs) => xs.map((x) => x.toFixed(0)).join(' ');
  console.log(
    `  sampled window: RSS mean ${mean(win.slice(0, tenth)).toFixed(0)} MB in its first tenth, ${mean(win.slice(-tenth)).toFixed(0)} MB in its last; V8 heap used at the scrapes ${heaps.map((h) => h.toFixed(1)).join(', ')} MB (min ${Math.min(...heaps).toFixed(1)}, max ${max(heaps).toFixed(1)})`,
  );
  // Where RSS goes when the heap used does not: V8's committed heap (used + free pages it keeps), memory outside it
  // (Buffers, zlib), and the process's anonymous memory, at each scrape (MB).
  console.log(
    `  at the scrapes: V8 heap total ${series(scrapes.map((s) => s.heapTotalMb))} (old space ${series(scrapes.map((s) => s.oldTotalMb))}, large objects ${series(scrapes.map((s) => s.largeTotalMb))}); external ${series(scrapes.map((s) => s.externalMb))}; RssAnon ${series(scrapes.map((s) => s.anonMb))}`,
  );
  console.log(
    `  CPU ${cpuPct.toFixed(2)}% of a core (${cpuS.toFixed(2)} CPU s: main thread ${(t1s.main - t0s.main).toFixed(2)}, others ${(t1s.other - t0s.other).toFixed(2)})${mark(cpuPct, goal?.cpuPct)}`,
  );
  console.log(
    `  event-loop lag p99 ${max(scrapes.map((s) => s.lagMs)).toFixed(1)} ms (worst of ${scrapes.length} scrapes)`,
  );
  console.log(
    `  /metrics scrape (as Prometheus: OpenMetrics, gzip) ${pct(
      scrapes.map((s) => s.ms),
      50,
    ).toFixed(
      1,
    )} ms median, ${max(scrapes.map((s) => s.ms)).toFixed(1)} ms max, ${(scrapes[0].bytes / 1024).toFixed(0)} KiB${mark(max(scrapes.map((s) => s.ms)), goal?.scrapeMs)}; daemon CPU across a scrape ${pct(
      scrapes.map((s) => s.cpuMs),
      50,
    ).toFixed(0)} ms median`,
  );
}

console.log(`bench:steady: node ${DAEMON_NODE_ARGS.join(' ')} ${CLI} on Node ${process.version}`);
for (const n of TARGET_COUNTS) await scenario(n);
