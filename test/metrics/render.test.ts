// renderMetrics writes /metrics without prom-client's per-scrape objects; it must stay byte-identical to
// prom-client's own writer, which is what dashboards, alerts and promtool were checked against.
import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics.js';
import { renderMetrics } from '../../src/metrics-render.js';

// The process and event-loop defaults are live: their values move between two renders, their lines must not.
const settled = (text: string) => text.replace(/^((?:process|nodejs)_\S+) \S+$/gm, '$1 V');

describe('renderMetrics', () => {
  it('writes what prom-client writes for every family of the daemon, defaults included', async () => {
    const m = createMetrics();
    const probe = { target: 'pd', probe: 'chat', endpoint: 'router', conn: 'fresh', kind: 'chat' };
    // Probe histograms carry exemplars (the run id, OpenMetrics only): observed as the daemon does.
    // prom-client types exemplar labels with the metric's label names; OpenMetrics exemplar labels are free-form.
    const exemplarLabels = { run_id: 'a1' } as Partial<Record<keyof typeof probe, string>>;
    m.probeDuration.observe({ labels: probe, value: 0.07, exemplarLabels });
    m.probeDuration.observe({ labels: probe, value: 42 });
    m.probeDuration.observe({ labels: { ...probe, conn: 'keepalive' }, value: 500 }); // above every bucket: only +Inf
    m.probeTtft.observe({ labels: probe, value: 0.01 });
    m.probesTotal.inc({ ...probe, result: 'ok' }, 3);
    m.probesTotal.inc({ ...probe, result: 'timeout' }, 0);
    m.probeSuccess.set(probe, 1);
    m.engineTokenUsage.set({ target: 'pd', service: 'decode' }, NaN);
    m.engineRunning.set({ target: 'pd', service: 'decode' }, Infinity);
    m.engineQueued.set({ target: 'pd', service: 'decode' }, -Infinity);
    m.engineGenThroughput.set({ target: 'pd', service: 'decode' }, 1e-7);
    // Label values needing escapes: backslash, newline, quote.
    m.logEvents.inc({ target: 'a\\b', service: 'x\ny', rule: 'say "hi"', class: 'c', severity: 's' });
    m.incidentCaptureDuration.observe(1.5);
    m.configReloadSuccessful.set(1);
    const fast = (await renderMetrics(m.registry)).toString();
    expect(settled(fast)).toBe(settled(await m.registry.metrics()));
    expect(fast).toContain('nodejs_eventloop_lag_p99_seconds ');
    expect(fast).toContain(
      'wedgewatch_probe_duration_seconds_bucket{le="+Inf",target="pd",probe="chat",endpoint="router",conn="keepalive",kind="chat"} 1',
    );
  });

  it('writes a removed series and an empty family as prom-client does', async () => {
    const m = createMetrics({ defaults: false });
    m.engineStalled.set({ target: 'pd', service: 'decode' }, 1);
    m.engineStalled.set({ target: 'pd', service: 'prefill' }, 0);
    m.probeTtft.observe({
      labels: { target: 'pd', probe: 'c', endpoint: 'e', conn: 'fresh', kind: 'chat' },
      value: 1,
    });
    expect((await renderMetrics(m.registry)).toString()).toBe(await m.registry.metrics());
    // Rendered once (its text is kept), then removed: the next body must not have it.
    m.engineStalled.remove({ target: 'pd', service: 'decode' });
    m.probeTtft.remove({ target: 'pd', probe: 'c', endpoint: 'e', conn: 'fresh', kind: 'chat' });
    m.engineStalled.set({ target: 'pd', service: 'prefill' }, 1);
    const after = (await renderMetrics(m.registry)).toString();
    expect(after).toBe(await m.registry.metrics());
    expect(after).not.toContain('service="decode"');
    expect(after).toContain('wedgewatch_engine_stalled{target="pd",service="prefill"} 1');
  });

  it('falls back to prom-client for a metric it does not know the shape of, and for default labels', async () => {
    const registry = new client.Registry();
    const summary = new client.Summary({ name: 'x_seconds', help: 'h', registers: [registry] });
    summary.observe(1);
    new client.Counter({ name: 'y_total', help: 'h', registers: [registry] }).inc();
    expect((await renderMetrics(registry)).toString()).toBe(await registry.metrics());
    registry.setDefaultLabels({ instance: 'i' });
    expect((await renderMetrics(registry)).toString()).toBe(await registry.metrics());
    expect((await renderMetrics(registry)).toString()).toContain('y_total{instance="i"} 1');
  });
});
