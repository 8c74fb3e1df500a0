// The scheduler's heartbeat as a counter (issue 26): wedgewatch_scheduler_rounds_total counts every planned round, so
// `increase(...[2m]) == 0` (WedgewatchSchedulerStalled) reads a stall, not a scrape's age; it stays flat once the
// scheduler stops, and a target removed by a reload loses its series (a flat counter left behind would page).
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseConfigText } from '../../src/config/load.js';
import { createMetrics, createProbeMetrics } from '../../src/metrics.js';
import { forgetRemovedSeries } from '../../src/outputs/metrics/forget-series.js';
import { ProbeScheduler } from '../../src/sources/probes/schedule.js';
import { capturingLogger } from '../helpers/logger.js';

const CONFIG = `
targets:
  - name: t1
    endpoints: [{ name: e, url: "http://127.0.0.1:9" }]
    probes: [{ name: h, kind: health, every: 10s, jitter: 0, timeout: 1s }]
`;

afterEach(() => {
  vi.useRealTimers();
});

const rounds = async (m: ReturnType<typeof createProbeMetrics>, target: string) =>
  (await m.schedulerRounds.get()).values.find((v) => v.labels.target === target)?.value;

describe('wedgewatch_scheduler_rounds_total', () => {
  it('counts one per planned round, as the last-tick gauge beats, and stays flat once stopped', async () => {
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'],
    });
    const loaded = parseConfigText(CONFIG, 'test.yaml', {});
    const target = loaded.config.targets[0]!;
    const metrics = createProbeMetrics(new Registry());
    let beats = 0;
    const set = metrics.schedulerTick.set.bind(metrics.schedulerTick);
    vi.spyOn(metrics.schedulerTick, 'set').mockImplementation((...args: Parameters<typeof set>) => {
      beats++;
      set(...args);
    });
    const s = new ProbeScheduler({
      target,
      headers: loaded.headers.get(target.name)!,
      metrics,
      logger: capturingLogger('debug').logger,
      onResult: () => {},
      now: () => Date.now(),
      monoNow: () => performance.now(),
    });
    try {
      s.start();
      const atStart = await rounds(metrics, 't1');
      expect(atStart).toBeGreaterThanOrEqual(1);
      await vi.advanceTimersByTimeAsync(120_000);
      const after = (await rounds(metrics, 't1'))!;
      // A round every 10 s: 12 in two minutes (the phase offset may put one more at the edge).
      expect(after - atStart!).toBeGreaterThanOrEqual(12);
      expect(after - atStart!).toBeLessThanOrEqual(13);
      expect(after).toBe(beats);
    } finally {
      await s.stop();
    }
    const stopped = await rounds(metrics, 't1');
    await vi.advanceTimersByTimeAsync(120_000);
    expect(await rounds(metrics, 't1')).toBe(stopped);
  });

  it('a target a reload removed loses its rounds series; a kept one keeps it', async () => {
    const m = createMetrics({ defaults: false });
    m.schedulerRounds.inc({ target: 'gone' }, 5);
    m.schedulerRounds.inc({ target: 'kept' }, 7);
    await forgetRemovedSeries(m, { targets: new Map([['kept', new Set<string>()]]) });
    const left = (await m.schedulerRounds.get()).values.map((v) => [v.labels.target, v.value]);
    expect(left).toEqual([['kept', 7]]);
  });
});
