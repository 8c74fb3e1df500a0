// Time from the NIXL bootstrap-thread traceback to the wedge page at the Alertmanager webhook, through
// the real pipeline (sim → daemon → Prometheus 1 s scrape/eval → Alertmanager). Median of 5 incidents.
// Run: npm run bench:page
import { it } from 'vitest';
import { waitFor } from '../test/helpers/wait.js';
import { findAlert, startPipeline, tripThreadDeath } from '../test/ops/pipeline.js';

const RUNS = 5;

it('traceback → page latency', { timeout: 900_000 }, async () => {
  const figures: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const p = await startPipeline();
    try {
      const tracebackAt = await tripThreadDeath(p.sim);
      const page = await waitFor(
        () => findAlert(p.notifications, 'pager', 'WedgewatchTargetWedged', 'firing'),
        {
          timeoutMs: 60_000,
          intervalMs: 20,
          what: 'wedge page',
        },
      );
      figures.push(page.notification.receivedAt - tracebackAt);
      console.log(`run ${i + 1}: ${(figures.at(-1)! / 1000).toFixed(2)} s`);
    } finally {
      await p.stop();
    }
  }
  const sorted = [...figures].sort((a, b) => a - b);
  console.log(
    `traceback → page: median ${(sorted[Math.floor(RUNS / 2)]! / 1000).toFixed(2)} s, ` +
      `min ${(sorted[0]! / 1000).toFixed(2)} s, max ${(sorted.at(-1)! / 1000).toFixed(2)} s (n=${RUNS})`,
  );
});
