// wrong_output is one of the probe results the vocabulary has, so its counter exists at 0 from the start: the
// first wrong answer is an increase() of 1. known-series.ts's own list left it out, and the series was born at
// 1 on the first wrong answer, which increase()/rate() cannot see (no earlier sample).
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseConfigText } from '../../src/config/load.js';
import { PROBE_RESULTS as VOCABULARY_RESULTS } from '../../src/core/vocabulary.js';
import { createKnownSeries } from '../../src/outputs/metrics/known-series.js';
import { createMetrics } from '../../src/metrics.js';
import { recordResult } from '../../src/sources/probes/runner.js';

const config = parseConfigText(
  stringify({
    stateDir: '/nonexistent',
    targets: [
      {
        name: 'pd',
        endpoints: [{ name: 'router', url: 'http://127.0.0.1:1' }],
        model: 'm',
        probes: [{ name: 'canary', kind: 'canary', every: '1m', timeout: '30s' }],
      },
    ],
  }),
  '/nonexistent/c.yaml',
  {},
).config;
const slots = new Map([
  ['pd', [{ probe: 'canary', kind: 'canary' as const, endpoint: 'router', conn: 'fresh' as const }]],
]);
const labels = { target: 'pd', probe: 'canary', endpoint: 'router', conn: 'fresh', kind: 'canary' };

/** Prometheus' increase() over two samples of a counter: 0 when the series has no first sample. */
const increase = (before: number | undefined, after: number | undefined) =>
  before === undefined || after === undefined ? 0 : after - before;

async function sample(m: ReturnType<typeof createMetrics>, result: string): Promise<number | undefined> {
  const got = (await m.probesTotal.get()).values.find((v) =>
    Object.entries({ ...labels, result }).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x),
  );
  return got?.value;
}

describe('wrong_output exists at 0 before the first wrong answer', () => {
  it('right after start the series is exported at 0; one wrong answer makes increase() 1', async () => {
    const m = createMetrics({ defaults: false });
    createKnownSeries(m, config, slots, 1_700_000_000_000);
    const atStart = await sample(m, 'wrong_output');
    expect(atStart).toBe(0);
    expect(await m.registry.metrics()).toContain(
      'wedgewatch_probes_total{target="pd",probe="canary",endpoint="router",conn="fresh",kind="canary",result="wrong_output"} 0',
    );
    recordResult(
      m,
      {
        kind: 'probe',
        target: 'pd',
        probe: 'canary',
        probeKind: 'canary',
        endpoint: 'router',
        conn: 'fresh',
        result: 'wrong_output',
        start: 1_700_000_000_000,
        durationMs: 900,
        error: 'expected 4, got 5',
      },
      1_700_000_001_000,
    );
    expect(increase(atStart, await sample(m, 'wrong_output'))).toBe(1);
  });

  it('every probe result of the vocabulary is pre-created for a slot', async () => {
    const m = createMetrics({ defaults: false });
    createKnownSeries(m, config, slots, 1_700_000_000_000);
    for (const result of Object.keys(VOCABULARY_RESULTS)) expect(await sample(m, result), result).toBe(0);
  });
});
