// Counters exist at zero for every label set the config can produce, so the first thread death, abort or
// failed remediation is an increase() of 1 in Prometheus, not a series born at 1 that rate() cannot see.
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseConfigText } from '../../src/config/load.js';
import { createKnownSeries } from '../../src/outputs/metrics/known-series.js';
import { PACKS } from '../../src/sources/logs/packs/index.js';
import { createMetrics } from '../../src/metrics.js';

const config = parseConfigText(
  stringify({
    stateDir: '/nonexistent',
    targets: [
      {
        name: 'pd',
        endpoints: [{ name: 'router', url: 'http://127.0.0.1:1' }],
        model: 'm',
        probes: [{ name: 'chat', kind: 'chat', every: '15s', timeout: '30s', conn: ['fresh'] }],
        logs: [{ service: 'prefill', path: '/nonexistent/prefill.log', packs: ['nixl', 'python'] }],
        remediate: { command: ['/usr/bin/systemctl', 'restart', 'x.service'] },
      },
    ],
    rules: [{ name: 'mine', severity: 'warning', match: 'oops' }],
  }),
  '/nonexistent/c.yaml',
  {},
).config;
const slots = new Map([
  ['pd', [{ probe: 'chat', kind: 'chat' as const, endpoint: 'router', conn: 'fresh' as const }]],
]);

describe('known series', () => {
  it('creates every log rule, probe result and remediation result at 0, and a last-line gauge', async () => {
    const m = createMetrics({ defaults: false });
    createKnownSeries(m, config, slots, 1_700_000_000_000);
    const text = await m.registry.metrics();
    for (const pack of ['nixl', 'python'] as const) {
      for (const r of PACKS[pack].rules) {
        expect(text).toContain(
          `wedgewatch_log_events_total{target="pd",service="prefill",rule="${r.name}",class="${r.class}",severity="${r.severity}"} 0`,
        );
      }
    }
    expect(text).toContain('rule="mine",class="custom",severity="warning"} 0');
    expect(text).not.toContain('rule="vllm_engine_dead"');
    expect(text).toContain(
      'wedgewatch_probes_total{target="pd",probe="chat",endpoint="router",conn="fresh",kind="chat",result="timeout"} 0',
    );
    expect(text).toContain(
      'wedgewatch_remediations_total{target="pd",action="systemctl",result="failure"} 0',
    );
    expect(text).toContain(
      'wedgewatch_log_read_errors_total{target="pd",service="prefill",reason="missing"} 0',
    );
    expect(text).toContain(
      'wedgewatch_log_last_line_timestamp_seconds{target="pd",service="prefill"} 1700000000',
    );
  });

  it('a reload keeps counts and last-line times already there', async () => {
    const m = createMetrics({ defaults: false });
    createKnownSeries(m, config, slots, 1_700_000_000_000);
    const labels = { target: 'pd', service: 'prefill' };
    m.logEvents.inc({ ...labels, rule: 'mine', class: 'custom', severity: 'warning' });
    m.logLastLine.set(labels, 1_700_000_100);
    createKnownSeries(m, config, slots, 1_700_000_200_000);
    const text = await m.registry.metrics();
    expect(text).toContain('rule="mine",class="custom",severity="warning"} 1');
    expect(text).toContain(
      'wedgewatch_log_last_line_timestamp_seconds{target="pd",service="prefill"} 1700000100',
    );
  });
});
