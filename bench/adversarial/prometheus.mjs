// A real Prometheus on 127.0.0.1 scraping the daemon every second and evaluating the shipped rules
// (alerts/wedgewatch.rules.yml) as bench/alerts-e2e.ts does, minus Alertmanager: an alert "fired" here is
// Prometheus's own ALERTS{alertstate="firing"} series, which is what Alertmanager would be sent.
/* global fetch, AbortSignal */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { RULES, freePort, track, until, whichBinary } from './harness.mjs';

export async function startPrometheus(dir, daemonAddr) {
  const bin = whichBinary('prometheus');
  if (bin === undefined) return undefined;
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const cfg = join(dir, 'prometheus.yml');
  writeFileSync(
    cfg,
    stringify({
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      rule_files: [RULES],
      scrape_configs: [{ job_name: 'wedgewatch', static_configs: [{ targets: [daemonAddr] }] }],
    }),
  );
  const child = track(
    spawn(
      bin,
      [
        `--config.file=${cfg}`,
        `--storage.tsdb.path=${join(dir, 'tsdb')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    ),
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  const prom = {
    url,
    child,
    async query(expr) {
      const r = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`, {
        signal: AbortSignal.timeout(5000),
      });
      const body = await r.json();
      if (body.status !== 'success') throw new Error(`query ${expr}: ${body.error}`);
      return body.data.result;
    },
    /** Alert names that were firing for `target` at any evaluation since `sinceMs`. */
    async firedSince(sinceMs, target) {
      const secs = Math.max(1, Math.ceil((Date.now() - sinceMs) / 1000));
      const sel = target ? `,target="${target}"` : '';
      const res = await prom.query(`max_over_time(ALERTS{alertstate="firing"${sel}}[${secs}s])`);
      return [...new Set(res.map((r) => r.metric.alertname))].sort();
    },
    stop() {
      child.kill('SIGKILL');
    },
  };
  await until(
    () =>
      fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1000) }).then(
        (r) => r.ok,
        () => false,
      ),
    { timeoutMs: 20_000, what: `prometheus ready (${stderr.slice(-300)})` },
  );
  await until(async () => (await prom.query('up{job="wedgewatch"} == 1')).length === 1, {
    timeoutMs: 20_000,
    intervalMs: 250,
    what: 'prometheus scraping the daemon',
  });
  return prom;
}
