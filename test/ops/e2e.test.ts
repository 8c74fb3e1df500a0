// End to end with real binaries, as an SRE runs it: a NIXL bootstrap-thread death in the simulator pages
// through the shipped rules and Alertmanager routing within 10 s of the traceback; a prefill restart resolves
// the page; an unrelated tool-call leak afterwards is delivered as a warning and pages nobody (the old rule
// re-fired the bootstrap page then); wrong canary answers then page through WedgewatchWrongOutput, naming the slot.
// Every dashboard query has data in that Prometheus afterwards.
// Alertmanager's group_wait/group_interval are cut to seconds here; bench/alerts-e2e.ts runs the same story
// with the shipped timings, 5 s scrapes and the 5-minute degraded and keep-alive alerts.
import { appendFileSync, renameSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import {
  TARGET,
  findAlert,
  promQuery,
  promQueryRange,
  startPipeline,
  tripThreadDeath,
  type Notification,
  type Pipeline,
} from './pipeline.js';
import { dashboardQueries, substituteGrafanaVariables } from './tools.js';

const RUNBOOKS = 'file:///opt/wedgewatch/docs/runbooks.md';

/** Firing notifications at the pager (critical) received after `since` (Unix ms). */
const pages = (ns: Notification[], since = 0) =>
  ns.filter((n) => n.receiver === 'pager' && n.status === 'firing' && n.receivedAt > since);

describe('alerting pipeline end to end', { timeout: 180_000 }, () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline({ fastTimings: true, toolcall: true, canary: true });
  }, 90_000);
  afterAll(async () => {
    await p?.stop();
  });

  let resolvedAt = 0;

  it('pages the wedge once, with target, diagnosis and evidence, within 10 s of the traceback, and resolves after a prefill restart', async () => {
    // Healthy first: the wedge page must not be there before the fault.
    await waitFor(
      async () =>
        (
          await promQueryRange(
            p.promUrl,
            `wedgewatch_target_state{state="ok"} == 1`,
            p.readyAt - 60_000,
            Date.now(),
          )
        ).length > 0,
      {
        timeoutMs: 30_000,
        intervalMs: 250,
        what: 'target ok in Prometheus',
      },
    );
    expect(pages(p.notifications)).toEqual([]);

    const tracebackAt = await tripThreadDeath(p.sim);
    const page = await waitFor(
      () => findAlert(p.notifications, 'pager', 'WedgewatchTargetWedged', 'firing'),
      {
        timeoutMs: Math.max(0, tracebackAt + 10_000 - Date.now()),
        intervalMs: 50,
        what: 'wedge page at the pager webhook within 10 s of the traceback',
      },
    );
    expect(page.alert.labels.target).toBe(TARGET);
    expect(page.alert.labels.severity).toBe('critical');
    expect(page.alert.labels.diagnosis).toBeUndefined();
    expect(page.alert.annotations.diagnosis).toBe('kv_bootstrap_thread_dead');
    expect(page.alert.annotations.evidence).toMatch(/^log kv_bootstrap_dead \(nixl_\w+\) on prefill at /);
    expect(page.alert.annotations.status_page).toBe(`http://${p.daemon.address()}/`);
    expect(page.alert.annotations.runbook_url).toBe(`${RUNBOOKS}#wedgewatchtargetwedged`);

    // What the on-call does (docs/runbooks.md): pause remediation, stop prefill, edit and reload, start prefill,
    // resume. Each step moves a dashboard panel.
    const wd = p.daemon.runtime!.watchdog!;
    expect(wd.pause(TARGET)).toBe(true);
    p.sim.enableFault('crash', { service: 'prefill' });
    await waitFor(
      async () =>
        (await promQuery(p.promUrl, 'wedgewatch_engine_scrape_success{service="prefill"} == 0')).length === 1,
      {
        timeoutMs: 30_000,
        intervalMs: 250,
        what: 'the stopped prefill fails its engine scrape in Prometheus',
      },
    );
    appendFileSync(p.watchedFile, '# changed during the incident\n');
    // A log rotated away without `create`: the configured path is missing until the router reopens it.
    renameSync(p.sim.logFiles.router, `${p.sim.logFiles.router}.1`);
    expect((await p.daemon.reload()).ok).toBe(true);
    await p.sim.restart('prefill');
    await waitFor(
      async () => (await promQuery(p.promUrl, 'wedgewatch_remediation_paused == 1')).length === 1,
      { timeoutMs: 30_000, intervalMs: 250, what: 'the pause seen by Prometheus' },
    );
    p.daemon.runtime!.watchdog!.resume(TARGET);
    const resolved = await waitFor(
      () => findAlert(p.notifications, 'pager', 'WedgewatchTargetWedged', 'resolved'),
      { timeoutMs: 90_000, intervalMs: 250, what: 'resolved notification for the wedge' },
    );
    expect(resolved.alert.labels.target).toBe(TARGET);
    expect(resolved.notification.receivedAt).toBeGreaterThan(page.notification.receivedAt);
    resolvedAt = resolved.notification.receivedAt;

    // One incident, one page: every critical notification of the incident (the wedge, the bootstrap-thread
    // death) belongs to one Alertmanager group, the target's.
    const incident = pages(p.notifications);
    expect(new Set(incident.map((n) => n.groupKey)).size).toBe(1);
    const names = new Set(incident.flatMap((n) => n.alerts.map((a) => a.labels.alertname)));
    expect(names).toContain('WedgewatchKVBootstrapThreadDead');
    // The traceback matched two kv_bootstrap_dead rules and the generic thread_death rule: one alert.
    const deaths = incident
      .flatMap((n) => n.alerts)
      .filter((a) => a.labels.alertname === 'WedgewatchKVBootstrapThreadDead');
    expect(new Set(deaths.map((a) => JSON.stringify(a.labels))).size).toBe(1);
  });

  it('a tool-call leak after recovery is a warning in chat and pages nobody', async () => {
    expect(resolvedAt).toBeGreaterThan(0);
    // The bootstrap-thread alert has resolved too before the unrelated fault starts.
    await waitFor(
      async () =>
        (await promQuery(p.promUrl, 'ALERTS{alertname="WedgewatchKVBootstrapThreadDead"}')).length === 0,
      { timeoutMs: 30_000, intervalMs: 250, what: 'bootstrap-thread alert inactive after recovery' },
    );
    const faultAt = Date.now();
    p.sim.enableFault('toolcall_leak');
    const warning = await waitFor(
      () => {
        const n = p.notifications.find(
          (x) =>
            x.receiver === 'chat' &&
            x.receivedAt > faultAt &&
            x.alerts.some((a) => a.labels.alertname === 'WedgewatchToolCallLeak' && a.status === 'firing'),
        );
        return n?.alerts.find((a) => a.labels.alertname === 'WedgewatchToolCallLeak');
      },
      { timeoutMs: 60_000, intervalMs: 250, what: 'WedgewatchToolCallLeak delivered to chat' },
    );
    expect(warning.labels.target).toBe(TARGET);
    // The leak degrades the target: the state the old bootstrap rule re-fired on.
    await waitFor(
      async () =>
        (await promQuery(p.promUrl, `wedgewatch_target_state{target="${TARGET}",state="degraded"} == 1`))
          .length === 1,
      { timeoutMs: 30_000, intervalMs: 250, what: 'target degraded by the leak' },
    );
    // Five rule evaluations while degraded (counted as samples of a recording rule): no critical alert is
    // even pending.
    const degradedAt = Date.now();
    await waitFor(
      async () => {
        const secs = Math.ceil((Date.now() - degradedAt) / 1000);
        const r = (await promQuery(
          p.promUrl,
          `count_over_time(wedgewatch:target_state:code{target="${TARGET}"}[${secs}s])`,
        )) as { value?: [number, string] }[];
        return Number(r[0]?.value?.[1] ?? 0) >= 5;
      },
      { timeoutMs: 30_000, intervalMs: 500, what: '5 rule evaluations while degraded' },
    );
    expect(await promQuery(p.promUrl, 'ALERTS{severity="critical"}')).toEqual([]);
    expect(pages(p.notifications, resolvedAt)).toEqual([]);
    p.sim.disableFault('toolcall_leak');
  });

  // Issue 26: the wrong-answer page selects on the slot's hold (wedgewatch_probe_wrong_output_held) and names the slot.
  it('wrong answers page through WedgewatchWrongOutput, naming the probe slot', async () => {
    const faultAt = Date.now();
    p.sim.enableFault('kv_corruption', { rate: 1, seed: 0 });
    try {
      const alert = await waitFor(
        () =>
          pages(p.notifications, faultAt)
            .flatMap((n) => n.alerts)
            .find((a) => a.labels.alertname === 'WedgewatchWrongOutput' && a.status === 'firing'),
        { timeoutMs: 60_000, intervalMs: 250, what: 'WedgewatchWrongOutput delivered to the pager' },
      );
      expect(alert.labels).toMatchObject({
        severity: 'critical',
        target: TARGET,
        probe: 'canary',
        kind: 'canary',
        endpoint: 'router',
        conn: 'fresh',
      });
      expect(alert.labels.state).toBeUndefined();
      expect(alert.annotations.description).toContain(
        'Probe canary (canary) on pd/router over fresh connections',
      );
      expect(Number(alert.annotations.wrong_answers)).toBeGreaterThanOrEqual(1);
      expect(alert.annotations.runbook_url).toBe(`${RUNBOOKS}#wedgewatchwrongoutput`);
    } finally {
      p.sim.disableFault('kv_corruption');
    }
  });

  // The panel test: every panel's query has data that moves during the incident. A flat line (a counter born
  // at its first value, a last-result gauge, a panel nothing feeds) is a failure.
  it('every dashboard query returns data that moves during the incident', async () => {
    const flat: string[] = [];
    const end = Date.now();
    // Steps with data at all: a single series present for only part of the run (a diagnosis while it held)
    // moves even though its value is constant, and there is no sibling series to compare its length with.
    const reference = (await promQueryRange(
      p.promUrl,
      `max(wedgewatch_target_state{target="${TARGET}"})`,
      p.readyAt - 60_000,
      end,
    )) as { values: unknown[] }[];
    const allSteps = reference[0]?.values.length ?? 0;
    expect(allSteps).toBeGreaterThan(0);
    const byPanel = new Map<string, string[]>();
    for (const q of dashboardQueries()) byPanel.set(q.where, [...(byPanel.get(q.where) ?? []), q.expr]);
    for (const [where, exprs] of byPanel) {
      const why: string[] = [];
      for (const e of exprs) {
        const expr = substituteGrafanaVariables(e, TARGET);
        const result = (await promQueryRange(p.promUrl, expr, p.readyAt - 60_000, end)) as {
          values: [number, string][];
        }[];
        if (result.length === 0) {
          why.push(`no data: ${expr}`);
          continue;
        }
        const steps = Math.max(allSteps, ...result.map((r) => r.values.length));
        const moves = result.some(
          (r) => new Set(r.values.map((v) => v[1])).size > 1 || r.values.length < steps,
        );
        // An annotation query is a list of events: having some during the incident is what it must do.
        if (moves || where.startsWith('annotation')) {
          why.length = 0;
          break;
        }
        why.push(`constant ${result[0]!.values[0]![1]}: ${expr}`);
      }
      if (why.length > 0) flat.push(`${where}: ${why.join('; ')}`);
    }
    expect(flat, flat.join('\n')).toEqual([]);
  });
});
