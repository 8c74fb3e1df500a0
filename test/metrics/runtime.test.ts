import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { LoopLag } from '../../src/lib/loop-lag.js';
import { collectRuntimeMetrics, lagStats } from '../../src/metrics-runtime.js';
import { waitFor } from '../helpers/wait.js';

const value = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);

describe('runtime metrics', () => {
  it('lagStats: percentiles, mean and spread of the samples; zeros when there are none', () => {
    const xs = Array.from({ length: 100 }, (_, i) => (i + 1) / 1000);
    const s = lagStats(xs.reverse());
    expect(s.min).toBe(0.001);
    expect(s.max).toBe(0.1);
    expect(s.p50).toBe(0.05);
    expect(s.p90).toBe(0.09);
    expect(s.p99).toBe(0.099);
    expect(s.mean).toBeCloseTo(0.0505, 6);
    expect(s.stddev).toBeCloseTo(0.028866, 5);
    expect(lagStats([])).toEqual({ min: 0, max: 0, mean: 0, stddev: 0, p50: 0, p90: 0, p99: 0 });
  });

  it('a blocked event loop shows in the lag series of the next scrape, and the samples start over after it', async () => {
    const registry = new client.Registry();
    const lag = new LoopLag(undefined, 20);
    collectRuntimeMetrics(registry, client.Gauge, { lag });
    const names = (await registry.getMetricsAsJSON()).map((m) => m.name);
    // prom-client's default families stay, in prom-client's order (the lag ones after the fd ones).
    expect(names).toContain('process_cpu_seconds_total');
    expect(names).toContain('nodejs_heap_size_used_bytes');
    expect(names).toContain('nodejs_gc_duration_seconds');
    expect(names.indexOf('nodejs_eventloop_lag_seconds')).toBe(names.indexOf('process_max_fds') + 1);
    expect(names.indexOf('nodejs_eventloop_lag_p99_seconds')).toBe(
      names.indexOf('nodejs_eventloop_lag_seconds') + 7,
    );
    await registry.metrics(); // starts the window now
    const until = Date.now() + 300;
    while (Date.now() < until) {
      // Busy on purpose: the loop is blocked for 300 ms.
    }
    // The late timer fires once the loop is free, so the block shows in a window within a scrape or two.
    let worst = 0;
    await waitFor(
      async () => {
        worst = Math.max(worst, value(await registry.metrics(), 'nodejs_eventloop_lag_max_seconds'));
        return worst > 0.2;
      },
      { timeoutMs: 5000 },
    );
    expect(worst).toBeLessThan(1);
    // The next window does not hold the block any more.
    await waitFor(async () => value(await registry.metrics(), 'nodejs_eventloop_lag_max_seconds') < 0.2, {
      timeoutMs: 5000,
    });
    // The same samples feed the probes' and scrapes' lag-aware timeouts: the block is in the sampler too.
    expect(lag.lostWithin(0, lag.now())).toBeGreaterThan(200);
    lag.stop();
  });
});
