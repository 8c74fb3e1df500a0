// The SRE run of issue 15, measured as deployed: sim → daemon → Prometheus (5 s scrape and evaluation, the
// shipped rules) → Alertmanager (the shipped routing and timings) → webhook. The demo incident (bootstrap
// thread death, prefill restart), then toolcall_leak and keepalive_stall long enough for their 5-minute and
// ratio-window alerts. Prints the timeline and fails if the wedge paged more than once, never resolved, a
// critical page came after recovery, or a warning was not delivered. Takes about 20 minutes.
// Run: npm run bench:alerts
import { it } from 'vitest';
import { waitFor } from '../test/helpers/wait.js';
import {
  TARGET,
  findAlert,
  promQuery,
  startPipeline,
  tripThreadDeath,
  type Notification,
} from '../test/ops/pipeline.js';

const delivered = (ns: Notification[], receiver: string, alertname: string, since: number) =>
  ns.find(
    (n) =>
      n.receiver === receiver &&
      n.receivedAt > since &&
      n.alerts.some((a) => a.labels.alertname === alertname && a.status === 'firing'),
  );

it('issue 15 SRE run: one page, resolved, warnings delivered', { timeout: 1_800_000 }, async () => {
  const p = await startPipeline({ intervalSeconds: 5, proxy: true, toolcall: true, probeEvery: '5s' });
  const t0 = Date.now();
  const at = (ms: number) => `${((ms - t0) / 1000).toFixed(1)} s`;
  const problems: string[] = [];
  try {
    const okState = async () =>
      (await promQuery(p.promUrl, `wedgewatch_target_state{target="${TARGET}",state="ok"} == 1`)).length ===
      1;
    await waitFor(okState, { timeoutMs: 120_000, intervalMs: 1000, what: 'target ok' });

    const tracebackAt = await tripThreadDeath(p.sim);
    console.log(`${at(tracebackAt)} traceback`);
    const page = await waitFor(
      () => findAlert(p.notifications, 'pager', 'WedgewatchTargetWedged', 'firing'),
      {
        timeoutMs: 120_000,
        intervalMs: 50,
        what: 'wedge page',
      },
    );
    console.log(
      `${at(page.notification.receivedAt)} page (${((page.notification.receivedAt - tracebackAt) / 1000).toFixed(2)} s after the traceback)`,
    );
    await p.sim.restart('prefill');
    const resolved = await waitFor(
      () => findAlert(p.notifications, 'pager', 'WedgewatchTargetWedged', 'resolved'),
      { timeoutMs: 300_000, intervalMs: 500, what: 'wedge resolved' },
    );
    const resolvedAt = resolved.notification.receivedAt;
    console.log(`${at(resolvedAt)} wedge resolved`);
    await waitFor(okState, { timeoutMs: 120_000, intervalMs: 1000, what: 'target ok after restart' });

    const leakAt = Date.now();
    p.sim.enableFault('toolcall_leak');
    console.log(`${at(leakAt)} toolcall_leak on`);
    for (const name of ['WedgewatchToolCallLeak', 'WedgewatchTargetDegraded']) {
      const n = await waitFor(() => delivered(p.notifications, 'chat', name, leakAt), {
        timeoutMs: 600_000,
        intervalMs: 1000,
        what: `${name} delivered`,
      }).catch(() => undefined);
      if (n) console.log(`${at(n.receivedAt)} ${name} delivered to chat`);
      else problems.push(`${name} was never delivered`);
    }
    p.sim.disableFault('toolcall_leak');
    await waitFor(okState, { timeoutMs: 300_000, intervalMs: 1000, what: 'target ok after the leak' });

    const stallAt = Date.now();
    p.sim.enableFault('keepalive_stall');
    console.log(`${at(stallAt)} keepalive_stall on`);
    for (const name of ['WedgewatchKeepaliveOnlyFailures', 'WedgewatchTargetDegraded']) {
      const n = await waitFor(() => delivered(p.notifications, 'chat', name, stallAt), {
        timeoutMs: 900_000,
        intervalMs: 1000,
        what: `${name} delivered`,
      }).catch(() => undefined);
      if (n) console.log(`${at(n.receivedAt)} ${name} delivered to chat`);
      else problems.push(`${name} was never delivered during keepalive_stall`);
    }
    p.sim.disableFault('keepalive_stall');

    const critical = p.notifications.filter((n) => n.receiver === 'pager' && n.status === 'firing');
    const groups = new Set(critical.map((n) => n.groupKey));
    const later = critical.filter((n) => n.receivedAt > resolvedAt);
    console.log(
      `critical firing notifications: ${critical.length} in ${groups.size} group(s); after recovery: ${later.length}`,
    );
    if (groups.size !== 1) problems.push(`the wedge paged as ${groups.size} incidents`);
    for (const n of later)
      problems.push(
        `critical page after recovery at ${at(n.receivedAt)}: ${n.alerts.map((a) => a.labels.alertname).join(', ')}`,
      );
  } finally {
    await p.stop();
  }
  if (problems.length > 0) throw new Error(problems.join('\n'));
});
