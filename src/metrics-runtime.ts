// The process_* and nodejs_* series every Node exporter exposes: prom-client's default metrics, all but its
// event-loop lag, which is measured here instead. prom-client measures lag with monitorEventLoopDelay at a 10 ms
// resolution: a timer firing 100 times a second, which on this kind of machine (a small VM) costs 0.47% of a
// core by itself, the whole steady-state budget of one target (issue 18; 0.013% for an idle process, measured
// with process.cpuUsage over 20 s). Here the process's lateness sampler (src/lib/loop-lag.ts: a timer every
// LAG_SAMPLE_MS records how late it fired, the same samples its probe and scrape timeouts read) feeds them. Same names;
// the values are lateness (0 when idle), where prom-client's were the time between its timer's firings (its
// 10 ms resolution included). A block shorter than the sample period is seen when a sample falls due during it.
import type client from 'prom-client';
import { createRequire } from 'node:module';
import { processLoopLag, type LoopLag } from './lib/loop-lag.js';

const require = createRequire(import.meta.url);

/** A default metric of prom-client: registers itself (and its collect) in `registry`. */
type DefaultMetric = (registry: client.Registry, config: Record<string, unknown>) => void;

// prom-client's own modules, by path (its package has no exports map): collectDefaultMetrics() has no way to
// leave one out, and the event-loop one starts its 10 ms timer as soon as it is called.
const DEFAULTS = [
  'processCpuTotal',
  'processStartTime',
  'osMemoryHeap',
  'processOpenFileDescriptors',
  'processMaxFileDescriptors',
  ...(typeof (process as { getActiveResourcesInfo?: unknown }).getActiveResourcesInfo === 'function'
    ? ['processResources']
    : []),
  'processHandles',
  'processRequests',
  'heapSizeAndUsed',
  'heapSpacesSizeAndUsed',
  'version',
  'gc',
];

/** Samples kept between two scrapes (the oldest go first): 8.5 minutes at the sampler's 500 ms. */
const LAG_KEEP = 1024;

export function collectRuntimeMetrics(
  registry: client.Registry,
  Gauge: typeof client.Gauge,
  opts: { lag?: LoopLag } = {},
): void {
  for (const name of DEFAULTS) {
    (require(`prom-client/lib/metrics/${name}.js`) as DefaultMetric)(registry, {});
    // Where prom-client registers it, so the series keep their order in /metrics.
    if (name === 'processMaxFileDescriptors') eventLoopLag(registry, Gauge, opts.lag ?? processLoopLag());
  }
}

const PARTS = ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99'] as const;
type Part = (typeof PARTS)[number];
const HELP: Record<Part, string> = {
  min: 'The minimum',
  max: 'The maximum',
  mean: 'The mean',
  stddev: 'The standard deviation',
  p50: 'The 50th percentile',
  p90: 'The 90th percentile',
  p99: 'The 99th percentile',
};

/** Lateness statistics of `xs` (unsorted seconds). */
export function lagStats(xs: number[]): Record<Part, number> {
  const k = xs.length;
  if (k === 0) return { min: 0, max: 0, mean: 0, stddev: 0, p50: 0, p90: 0, p99: 0 };
  const s = [...xs].sort((a, b) => a - b);
  const mean = s.reduce((a, x) => a + x, 0) / k;
  const at = (p: number) => s[Math.min(k - 1, Math.max(0, Math.ceil((p / 100) * k) - 1))]!;
  return {
    min: s[0]!,
    max: s[k - 1]!,
    mean,
    stddev: Math.sqrt(s.reduce((a, x) => a + (x - mean) ** 2, 0) / k),
    p50: at(50),
    p90: at(90),
    p99: at(99),
  };
}

function eventLoopLag(registry: client.Registry, Gauge: typeof client.Gauge, sampler: LoopLag): void {
  const samples = new Float64Array(LAG_KEEP);
  let n = 0;
  // The sampler's timer never keeps the process alive (a metrics registry must not).
  sampler.subscribe((lateMs) => {
    samples[n++ % LAG_KEEP] = lateMs / 1000;
  });
  sampler.start();
  const everyMs = sampler.everyMs;

  const gauges = {} as Record<Part, client.Gauge>;
  // Registered first: its collect sets the others before they are written.
  const lag: client.Gauge = new Gauge({
    name: 'nodejs_eventloop_lag_seconds',
    help: 'Lag of event loop in seconds.',
    registers: [registry],
    // As prom-client: how long a setImmediate waits at scrape time (reported at the next scrape). The samples
    // start over at each scrape, so the statistics cover the time since the previous one.
    collect() {
      const s = lagStats(Array.from(samples.subarray(0, Math.min(n, LAG_KEEP))));
      for (const p of PARTS) gauges[p].set(s[p]);
      n = 0;
      const start = process.hrtime.bigint();
      setImmediate(() => lag.set(Number(process.hrtime.bigint() - start) / 1e9));
    },
  });
  for (const p of PARTS) {
    gauges[p] = new Gauge({
      name: `nodejs_eventloop_lag_${p}_seconds`,
      help: `${HELP[p]} of the event loop's lateness, sampled every ${everyMs} ms since the last scrape, in seconds.`,
      registers: [registry],
    });
  }
}
