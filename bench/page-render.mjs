// @ts-check
// bench:page-render — the status page at its largest: 50 targets, each with 24 h of history at the example
// config's cadence (bench:steady's: chat every 15 s over fresh and keep-alive on two hops, toolcall every minute,
// health every 10 s on both hops: 7 slots), ten of them through a wedge incident with its events. Prints the HTML
// size at 1 h, 6 h and 24 h and the CPU time of one GET / worth of work (the journal queries, the strips, the
// sparklines and the HTML), the median of RUNS renders after a warm-up. Goals (issue 30): < 300 KB, < 50 ms.
// Prints figures; asserts nothing.
//   npm run bench:page-render        TARGETS=50 RUNS=30   DUMP=FILE: write the 24 h page to FILE, to look at it
/* global Buffer */
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Journal } from '../dist/outputs/journal/journal.js';
import { ProbeHistory } from '../dist/sources/probes/history.js';
import { withHistory } from '../dist/outputs/server/status-page-route.js';
import { renderStatusPage } from '../dist/outputs/server/status-page.js';

const TARGETS = Number(process.env.TARGETS ?? 50);
const RUNS = Number(process.env.RUNS ?? 30);
const H = 3_600_000;
const NOW = Date.UTC(2026, 0, 2, 12, 0, 0);
const GOALS = { kb: 300, cpuMs: 50 };

// A seeded generator: the same page every run.
let seed = 42;
const rand = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
const jitter = (/** @type {number} */ v, /** @type {number} */ f) => v * (1 + (rand() - 0.5) * 2 * f);

const quiet = { info() {}, warn() {}, error() {}, debug() {}, child: () => quiet };
const journal = new Journal({ logger: quiet });
const history = new ProbeHistory();
const SLOTS = [
  ...['proxy', 'router'].flatMap((endpoint) =>
    ['fresh', 'keepalive'].map((conn) => ({ probe: 'chat', kind: 'chat', endpoint, conn, every: 15_000 })),
  ),
  { probe: 'tools', kind: 'toolcall', endpoint: 'router', conn: 'fresh', every: 60_000 },
  { probe: 'health', kind: 'health', endpoint: 'proxy', conn: 'fresh', every: 10_000 },
  { probe: 'health', kind: 'health', endpoint: 'router', conn: 'fresh', every: 10_000 },
];

/** @type {Record<string, unknown>[]} */
const views = [];
const t0 = performance.now();
for (let i = 0; i < TARGETS; i++) {
  const target = `pd-${i}`;
  // Every fifth target was wedged for ten minutes some hours ago and remediated.
  const incident =
    i % 5 === 0 ? { from: NOW - (3 + (i % 17)) * H, to: NOW - (3 + (i % 17)) * H + 600_000 } : undefined;
  for (const s of SLOTS) {
    for (let t = NOW - 24 * H; t < NOW; t += s.every) {
      const start = t + Math.floor(rand() * 1500);
      const bad = incident && start >= incident.from && start < incident.to && s.kind !== 'health';
      const ttft = s.kind === 'health' ? undefined : jitter(s.conn === 'keepalive' ? 60 : 85, 0.25);
      const failed = bad || rand() < 0.002;
      history.record({
        kind: 'probe',
        target,
        probe: s.probe,
        probeKind: s.kind,
        endpoint: s.endpoint,
        conn: s.conn,
        result: failed ? 'timeout' : 'ok',
        start,
        durationMs: failed
          ? 30_000
          : s.kind === 'health'
            ? jitter(3, 0.5)
            : jitter(s.kind === 'toolcall' ? 900 : 300, 0.2),
        ttftMs: failed ? undefined : ttft,
      });
    }
  }
  /**
   * @param {number} time
   * @param {string} type
   * @param {string} summary
   * @param {Record<string, unknown>} [data]
   */
  const ev = (time, type, summary, data) => journal.append({ time, target, type, summary, data });
  ev(NOW - 24 * H - 60_000, 'transition', 'unknown → ok: completions finish on every probed hop', {
    from: 'unknown',
    to: 'ok',
    diagnosis: null,
    cause: 'completions finish on every probed hop',
  });
  if (incident) {
    const f = incident.from;
    ev(
      f,
      'critical_log',
      'prefill: nixl_bootstrap_thread_dead: Exception in thread Thread-1 (bootstrap_thread):',
      {
        service: 'prefill',
        rule: 'nixl_bootstrap_thread_dead',
      },
    );
    ev(f + 1000, 'transition', 'ok → degraded (abort_storm): 20 aborts within 60 s', {
      from: 'ok',
      to: 'degraded',
      diagnosis: 'abort_storm',
      cause: '20 aborts within 60 s',
    });
    ev(
      f + 6000,
      'critical_confirmed',
      'nixl_bootstrap_thread_dead confirmed by chat on proxy/fresh in flight for 6 s',
      {},
    );
    ev(
      f + 6001,
      'transition',
      'degraded → wedged (kv_bootstrap_thread_dead): nixl_bootstrap_thread_dead on prefill',
      {
        from: 'degraded',
        to: 'wedged',
        diagnosis: 'kv_bootstrap_thread_dead',
        cause: 'nixl_bootstrap_thread_dead on prefill, confirmed by a failing or hung probe',
      },
    );
    ev(
      f + 7000,
      'incident',
      `incident bundle /var/lib/wedgewatch/incidents/x-${target} (captured, 15 files, 107 kB)`,
      {
        id: `20260102T0${i % 10}0000.000Z-${target}`,
        result: 'captured',
      },
    );
    ev(
      f + 11_000,
      'remediation',
      'remediation restart success: systemctl restart sglang-prefill (kv_bootstrap_thread_dead)',
      {
        result: 'success',
      },
    );
    ev(incident.to, 'transition', 'wedged → ok: completions finish on every probed hop', {
      from: 'wedged',
      to: 'ok',
      diagnosis: null,
      cause: 'completions finish on every probed hop',
    });
  }
  const last = (/** @type {(typeof SLOTS)[number]} */ s) => ({
    probe: s.probe,
    endpoint: s.endpoint,
    conn: s.conn,
    result: 'ok',
    durationMs: s.kind === 'health' ? 3 : 300,
    ttftMs: s.kind === 'health' ? undefined : 80,
  });
  views.push({
    target,
    state: 'ok',
    since: incident ? incident.to : NOW - 24 * H - 60_000,
    cause: 'completions finish on every probed hop',
    endpoints: ['proxy', 'router'],
    probes: SLOTS.map(last),
    events: journal
      .query({ target, limit: 50 })
      .map((/** @type {{ time: number, type: string, summary: string }} */ e) => ({
        time: e.time,
        kind: e.type,
        text: e.summary,
      })),
    changes: [],
    remediationPaused: false,
  });
}
const fillMs = performance.now() - t0;

/** @param {string} range */
function render(range) {
  const withH = views.map((v) => withHistory(v, { journal, history }, range, NOW));
  return renderStatusPage(withH, { now: NOW, range, version: 'bench' });
}

/** @param {() => void} fn */
function cpuMs(fn) {
  const a = process.cpuUsage();
  fn();
  const b = process.cpuUsage(a);
  return (b.user + b.system) / 1000;
}

console.log(
  `bench:page-render: ${TARGETS} targets × ${SLOTS.length} slots, 24 h of history (filled in ${Math.round(fillMs)} ms); probe history ${history.slotCount()} slots`,
);
if (process.env.DUMP) writeFileSync(process.env.DUMP, render('24h'));
for (const range of ['1h', '6h', '24h']) {
  const html = render(range);
  for (let i = 0; i < 5; i++) render(range);
  const times = Array.from({ length: RUNS }, () => cpuMs(() => render(range))).sort((a, b) => a - b);
  const kb = Buffer.byteLength(html) / 1024;
  const med = times[Math.floor(times.length / 2)];
  const p90 = times[Math.floor(times.length * 0.9)];
  const ok = kb < GOALS.kb && med < GOALS.cpuMs ? 'ok' : 'OVER GOAL';
  console.log(
    `  range ${range.padEnd(3)}  HTML ${kb.toFixed(1).padStart(6)} KB   render CPU median ${med.toFixed(1)} ms, p90 ${p90.toFixed(1)} ms   (goal < ${GOALS.kb} KB, < ${GOALS.cpuMs} ms: ${ok})`,
  );
}
{
  const base = renderStatusPage(views, { now: NOW, range: '24h', version: 'bench' });
  console.log(
    `  without strips and sparklines (the page before issue 30): ${(Buffer.byteLength(base) / 1024).toFixed(1)} KB`,
  );
}
