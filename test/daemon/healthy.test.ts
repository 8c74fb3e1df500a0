// The watcher watched: /-/healthy fails once a target's probe scheduler has not ticked for 3 intervals (the
// daemon still answers HTTP, so plain liveness would call it healthy), and the heartbeats are metrics.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { waitFor } from '../helpers/wait.js';
import { quietLogger } from '../helpers/logger.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-healthy-'));
const quiet = quietLogger('error');

describe('/-/healthy and the heartbeats', () => {
  let d: Daemon | undefined;
  afterAll(async () => {
    await d?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exports scheduler and follower heartbeats, and turns 503 when the scheduler stops ticking', async () => {
    const file = join(dir, 'c.yaml');
    writeFileSync(
      file,
      `
web: { listenAddress: "127.0.0.1:0" }
stateDir: ${dir}/state
targets:
  - name: a
    endpoints: [{ name: router, url: "http://127.0.0.1:9" }]
    probes: [{ name: liveness, kind: health, every: 1s, timeout: 500ms, path: /health }]
    logs: [{ service: prefill, path: ${dir}/missing.log }]
`,
    );
    d = new Daemon({ configPath: file, logger: quiet });
    await d.start();
    const base = `http://${d.address()}`;
    const get = async (path: string) => {
      const res = await request(`${base}${path}`);
      return { status: res.statusCode, body: await res.body.text() };
    };
    expect(await get('/-/healthy')).toEqual({ status: 200, body: 'wedgewatch is Healthy.\n' });

    const metrics = await waitFor(
      async () => {
        const m = (await get('/metrics')).body;
        return m.includes(
          'wedgewatch_log_follower_last_tick_timestamp_seconds{target="a",service="prefill"}',
        ) && m.includes('reason="missing"} 1')
          ? m
          : undefined;
      },
      { timeoutMs: 10_000, what: 'heartbeat metrics' },
    );
    expect(metrics).toMatch(/wedgewatch_scheduler_last_tick_timestamp_seconds\{target="a"\} \d{10}/);
    expect(metrics).toContain('wedgewatch_scheduler_tick_interval_seconds{target="a"} 1');
    // The missing log still has a last-line time (the daemon's start), so the stale-log alert can see it.
    expect(metrics).toMatch(
      /wedgewatch_log_last_line_timestamp_seconds\{target="a",service="prefill"\} \d{10}/,
    );

    // A scheduler that stopped planning rounds: the daemon serves on, but is not healthy. Healthy before the stop
    // (with no time pretended on top: a loaded host's timers fire a second or two late, and that is still a tick).
    expect(d.unhealthy()).toBeUndefined();
    await d.runtime!.probes!.get('a')!.stop();
    const sick = await waitFor(
      async () => {
        const r = await get('/-/healthy');
        return r.status === 503 ? r : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 200, what: '/-/healthy 503 after 3 missed intervals' },
    );
    expect(sick.body).toMatch(
      /^wedgewatch is not healthy: the probe scheduler of target a has not ticked for \d+ s/,
    );
    expect((await get('/-/ready')).status).toBe(200);
  });
});
