// renderMetrics writes /metrics without prom-client's per-scrape objects; it must stay byte-identical to
// prom-client's own writer, which is what dashboards, alerts and promtool were checked against.
import client from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics, type Metrics } from '../../src/metrics.js';
import { openMetrics, renderMetrics } from '../../src/outputs/metrics/metrics-render.js';
import { REDACTED, Redactor } from '../../src/lib/redact.js';

// The process and event-loop defaults are live: their values move between two renders, their lines must not.
const settled = (text: string) => text.replace(/^((?:process|nodejs)_\S+) \S+$/gm, '$1 V');

/** Every family shape of the daemon with data: exemplars (on a bucket and on +Inf), escapes, NaN and ±Inf. */
function populate(m: Metrics): void {
  const probe = { target: 'pd', probe: 'chat', endpoint: 'router', conn: 'fresh', kind: 'chat' };
  // prom-client types exemplar labels with the metric's label names; OpenMetrics exemplar labels are free-form.
  const ex = (id: string) => ({ run_id: id }) as Partial<Record<keyof typeof probe, string>>;
  m.probeDuration.observe({ labels: probe, value: 0.07, exemplarLabels: ex('a1') });
  m.probeDuration.observe({ labels: probe, value: 42 });
  m.probeDuration.observe({ labels: { ...probe, conn: 'keepalive' }, value: 500, exemplarLabels: ex('b2') });
  m.probeFailureDuration.observe({ labels: probe, value: 3, exemplarLabels: ex('say "\\hi"\n') });
  m.probeTtft.observe({ labels: probe, value: 0.01 });
  m.probesTotal.inc({ ...probe, result: 'ok' }, 3);
  m.probesTotal.inc({ ...probe, result: 'timeout' }, 0);
  m.probeSuccess.set(probe, 1);
  m.engineTokenUsage.set({ target: 'pd', service: 'decode' }, NaN);
  m.engineRunning.set({ target: 'pd', service: 'decode' }, Infinity);
  m.engineQueued.set({ target: 'pd', service: 'decode' }, -Infinity);
  m.engineGenThroughput.set({ target: 'pd', service: 'decode' }, 1e-7);
  m.logEvents.inc({ target: 'a\\b', service: 'x\ny', rule: 'say "hi"', class: 'c', severity: 's' });
  m.incidentCaptureDuration.observe(1.5);
  m.configReloadSuccessful.set(1);
}

/** A redactor that knows no secret: the comparisons with prom-client see every label as it is. */
const plain = new Redactor();

describe('renderMetrics', () => {
  it('writes what prom-client writes for every family of the daemon, defaults included', async () => {
    const m = createMetrics();
    populate(m);
    const fast = (await renderMetrics(m.registry, { redactor: plain })).toString();
    expect(settled(fast)).toBe(settled(await m.registry.metrics()));
    expect(fast).toContain('nodejs_eventloop_lag_p99_seconds ');
    expect(fast).toContain(
      'wedgewatch_probe_duration_seconds_bucket{le="+Inf",target="pd",probe="chat",endpoint="router",conn="keepalive",kind="chat"} 1',
    );
  });

  it('writes a body that outgrows its first buffer, with multi-byte label text, as prom-client does', async () => {
    // Pieces are gathered and written in batches, the buffer grown between them: every batch lands whole and in
    // order, multi-byte characters included.
    const m = createMetrics({ defaults: false });
    for (let i = 0; i < 3000; i++)
      m.logEvents.inc({
        target: `zoné-日本-✓-${i}`,
        service: 'décodé',
        rule: 'r',
        class: 'c',
        severity: 's',
      });
    const fast = await renderMetrics(m.registry, { redactor: plain });
    expect(fast.length).toBeGreaterThan(300_000);
    expect(fast.toString('utf8')).toBe(await m.registry.metrics());
    expect(fast.equals(Buffer.from(await m.registry.metrics(), 'utf8'))).toBe(true);
  });

  it('writes a removed series and an empty family as prom-client does', async () => {
    const m = createMetrics({ defaults: false });
    m.engineStalled.set({ target: 'pd', service: 'decode' }, 1);
    m.engineStalled.set({ target: 'pd', service: 'prefill' }, 0);
    m.probeTtft.observe({
      labels: { target: 'pd', probe: 'c', endpoint: 'e', conn: 'fresh', kind: 'chat' },
      value: 1,
    });
    expect((await renderMetrics(m.registry, { redactor: plain })).toString()).toBe(
      await m.registry.metrics(),
    );
    // Rendered once (its text is kept), then removed: the next body must not have it.
    m.engineStalled.remove({ target: 'pd', service: 'decode' });
    m.probeTtft.remove({ target: 'pd', probe: 'c', endpoint: 'e', conn: 'fresh', kind: 'chat' });
    m.engineStalled.set({ target: 'pd', service: 'prefill' }, 1);
    const after = (await renderMetrics(m.registry, { redactor: plain })).toString();
    expect(after).toBe(await m.registry.metrics());
    expect(after).not.toContain('service="decode"');
    expect(after).toContain('wedgewatch_engine_stalled{target="pd",service="prefill"} 1');
  });

  it('falls back to prom-client for a metric it does not know the shape of, and for default labels', async () => {
    const registry = new client.Registry();
    const summary = new client.Summary({ name: 'x_seconds', help: 'h', registers: [registry] });
    summary.observe(1);
    new client.Counter({ name: 'y_total', help: 'h', registers: [registry] }).inc();
    expect((await renderMetrics(registry, { redactor: plain })).toString()).toBe(await registry.metrics());
    registry.setDefaultLabels({ instance: 'i' });
    expect((await renderMetrics(registry, { redactor: plain })).toString()).toBe(await registry.metrics());
    expect((await renderMetrics(registry, { redactor: plain })).toString()).toContain(
      'y_total{instance="i"} 1',
    );
  });

  it('writes OpenMetrics as prom-client does for every family of the daemon: exemplars, _total, # EOF', async () => {
    const m = createMetrics();
    populate(m);
    const om = (await renderMetrics(m.registry, { format: 'openmetrics', redactor: plain })).toString();
    expect(settled(om)).toBe(settled(await openMetrics(m.registry)));
    expect(om.endsWith('\n# EOF\n')).toBe(true);
    expect(om).toMatch(/^# TYPE wedgewatch_probes counter$/m);
    expect(om).toMatch(/^wedgewatch_probes_total\{[^}]*result="ok"\} 3$/m);
    expect(om).toMatch(
      /^wedgewatch_probe_duration_seconds_bucket\{le="0\.1",[^}]*conn="fresh"[^}]*\} 1 # \{run_id="a1"\} 0\.07 \d+(\.\d+)?$/m,
    );
    // Above every bucket: the exemplar sits on +Inf.
    expect(om).toMatch(
      /^wedgewatch_probe_duration_seconds_bucket\{le="\+Inf",[^}]*keepalive[^}]*\} 1 # \{run_id="b2"\} 500 /m,
    );
    expect(om).toContain('# {run_id="say \\"\\\\hi\\"\\n"} 3 ');
    // Rendered after OpenMetrics, the text format is still prom-client's text (no exemplar, _total on TYPE).
    const text = (await renderMetrics(m.registry, { redactor: plain })).toString();
    expect(settled(text)).toBe(settled(await m.registry.metrics()));
    expect(text).not.toContain('run_id');
  });

  it('writes OpenMetrics as prom-client does for other shapes: a counter without _total, counter exemplars, a summary', async () => {
    const registry = new client.Registry();
    // Exemplars need an OpenMetrics registry at construction; metrics.ts registers such metrics afterwards.
    const c = new client.Counter({
      name: 'jobs',
      help: 'h \\ with\nnewline',
      labelNames: ['k'],
      enableExemplars: true,
      registers: [],
    });
    registry.registerMetric(c);
    // prom-client's types want exemplar labels among the metric's label names; at run time any name works.
    c.inc({
      labels: { k: 'a' },
      value: 2,
      exemplarLabels: { trace: 't1' },
    } as unknown as client.IncreaseDataWithExemplar<'k'>);
    c.inc({ labels: { k: 'b' }, value: 1 });
    new client.Gauge({ name: 'empty', help: 'no series', labelNames: ['x'], registers: [registry] });
    new client.Summary({ name: 's_seconds', help: 'h', registers: [registry] }).observe(1);
    new client.Counter({ name: 'z_total', help: 'h', registers: [registry] }).inc();
    for (let i = 0; i < 2; i++) {
      const om = (await renderMetrics(registry, { format: 'openmetrics', redactor: plain })).toString();
      expect(om).toBe(await openMetrics(registry));
      expect(om).toMatch(/^jobs_total\{k="a"\} 2 # \{trace="t1"\} 2 \d+/m);
      expect(om).toMatch(/^# TYPE z counter\nz_total 1$/m);
      expect((await renderMetrics(registry, { redactor: plain })).toString()).toBe(await registry.metrics());
    }
  });

  it('drops a removed series from OpenMetrics as from text', async () => {
    const m = createMetrics({ defaults: false });
    const labels = { target: 'pd', probe: 'c', endpoint: 'e', conn: 'fresh', kind: 'chat' };
    m.probesTotal.inc({ ...labels, result: 'ok' });
    m.probeTtft.observe({ labels, value: 1, exemplarLabels: { run_id: 'r' } as Partial<typeof labels> });
    const render = async () =>
      (await renderMetrics(m.registry, { format: 'openmetrics', redactor: plain })).toString();
    expect(await render()).toBe(await openMetrics(m.registry));
    m.probesTotal.remove({ ...labels, result: 'ok' });
    m.probeTtft.remove(labels);
    const after = await render();
    expect(after).toBe(await openMetrics(m.registry));
    expect(after).not.toContain('probe="c"');
  });
});

describe('renderMetrics redaction', () => {
  const token = 'sk-live-9f8e7d6c5b4a';
  const bodies = async (m: Metrics, r: Redactor) => [
    (await renderMetrics(m.registry, { redactor: r })).toString(),
    (await renderMetrics(m.registry, { format: 'openmetrics', redactor: r })).toString(),
  ];

  it('redacts a secret in a label value and in an exemplar, in both formats, and only that', async () => {
    const r = new Redactor();
    r.set([token]);
    const m = createMetrics({ defaults: false });
    const labels = {
      target: `http://h/?key=${token}`,
      probe: 'c',
      endpoint: 'e',
      conn: 'fresh',
      kind: 'chat',
    };
    m.probeSuccess.set(labels, 1);
    m.probeTtft.observe({ labels, value: 0.2, exemplarLabels: { run_id: token } as Partial<typeof labels> });
    // A credential by shape, no secret named: the same redactor's patterns apply.
    m.logEvents.inc({
      target: 'pd',
      service: 'd',
      rule: 'Authorization: Bearer abc123def456',
      class: 'c',
      severity: 's',
    });
    for (const body of await bodies(m, r)) {
      expect(body).not.toContain(token);
      expect(body).not.toContain('abc123def456');
      expect(body).toContain(`wedgewatch_probe_success{target="http://h/?key=${REDACTED}",probe="c"`);
      expect(body).toContain(`rule="Authorization: Bearer ${REDACTED}"`);
    }
    expect((await bodies(m, r))[1]).toContain(`# {run_id="${REDACTED}"} 0.2 `);
  });

  it('redacts a secret added later (a reload) from the next render on, though the series text was kept', async () => {
    const r = new Redactor();
    const m = createMetrics({ defaults: false });
    const labels = { target: `t-${token}`, probe: 'c', endpoint: 'e', conn: 'fresh', kind: 'chat' };
    m.probeSuccess.set(labels, 1);
    m.probesTotal.inc({ ...labels, result: 'ok' });
    for (const body of await bodies(m, r)) expect(body).toContain(token);
    const before = r.generation;
    r.setSource('env-file', [token]);
    expect(r.generation).not.toBe(before);
    for (const body of await bodies(m, r)) {
      expect(body).not.toContain(token);
      expect(body).toContain(`target="t-${REDACTED}"`);
    }
    r.dropSource('env-file');
    for (const body of await bodies(m, r)) expect(body).toContain(token);
  });
});
