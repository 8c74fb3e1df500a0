// End to end with real binaries: a NIXL bootstrap-thread death in the simulator pages through the shipped
// rules and Alertmanager routing within 10 s of the traceback, a prefill restart resolves it, and every
// dashboard query has data in that Prometheus afterwards.
import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import {
  TARGET,
  findAlert,
  promQueryRange,
  startPipeline,
  tripThreadDeath,
  type Pipeline,
} from './pipeline.js';
import { dashboardQueries, substituteGrafanaVariables } from './tools.js';

describe('alerting pipeline end to end', { timeout: 180_000 }, () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline();
  }, 90_000);
  afterAll(async () => {
    await p?.stop();
  });

  it('pages the wedge with target and diagnosis within 10 s of the traceback, and resolves after a prefill restart', async () => {
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
    expect(findAlert(p.notifications, 'pager', 'WedgewatchTargetWedged', 'firing')).toBeUndefined();

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
    expect(page.alert.labels.diagnosis).toBe('kv_bootstrap_thread_dead');
    expect(page.alert.annotations.description).toContain('kv_bootstrap_thread_dead');
    expect(page.alert.annotations.runbook_url).toBe('docs/runbooks.md#wedgewatchtargetwedged');

    appendFileSync(p.watchedFile, '# changed during the incident\n');
    await p.sim.restart('prefill');
    const resolved = await waitFor(
      () => findAlert(p.notifications, 'pager', 'WedgewatchTargetWedged', 'resolved'),
      {
        timeoutMs: 90_000,
        intervalMs: 250,
        what: 'resolved notification for the wedge',
      },
    );
    expect(resolved.alert.labels.target).toBe(TARGET);
    expect(resolved.notification.receivedAt).toBeGreaterThan(page.notification.receivedAt);
  });

  it('every dashboard query returns data from that Prometheus', async () => {
    const empty: string[] = [];
    for (const q of dashboardQueries()) {
      const expr = substituteGrafanaVariables(q.expr, TARGET);
      const result = await promQueryRange(p.promUrl, expr, p.readyAt - 60_000, Date.now());
      if (result.length === 0) empty.push(`${q.where}: ${expr}`);
    }
    expect(empty).toEqual([]);
  });
});
