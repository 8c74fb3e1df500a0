import { execFileSync } from 'node:child_process';
import * as net from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/daemon.js';
import { startCli } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait.js';
import { capturingLogger } from '../helpers/logger.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-daemon-'));

function config(targetName: string, lifecycle = true): string {
  return `
web: { listenAddress: "127.0.0.1:0", enableLifecycle: ${lifecycle} }
stateDir: ${dir}/state
targets:
  - name: ${targetName}
    endpoints: [{ name: router, url: "http://127.0.0.1:9" }]
`;
}

async function get(base: string, path: string, method: 'GET' | 'POST' = 'GET') {
  const res = await request(`${base}${path}`, { method });
  return { status: res.statusCode, body: await res.body.text() };
}

let daemons: Daemon[] = [];
afterEach(async () => {
  await Promise.all(daemons.map((d) => d.stop()));
  daemons = [];
});

async function startDaemon(file: string) {
  const { logger, lines } = capturingLogger();
  const d = new Daemon({ configPath: file, logger });
  daemons.push(d);
  await d.start();
  return { d, base: `http://${d.address()}`, lines };
}

describe('daemon', () => {
  it('serves /metrics, /-/healthy, /-/ready and a landing page linking them', async () => {
    const file = join(dir, 'basic.yaml');
    writeFileSync(file, config('a'));
    const { base } = await startDaemon(file);
    const metrics = await get(base, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(
      /^wedgewatch_build_info\{version="\d+\.\d+\.\d+",revision="[^"]+",branch="[^"]+",node_version="v20\.[^"]+"\} 1$/m,
    );
    expect(metrics.body).toMatch(/^wedgewatch_config_last_reload_successful 1$/m);
    expect(metrics.body).toMatch(/^nodejs_eventloop_lag_seconds /m);
    expect(metrics.body).toMatch(/^process_resident_memory_bytes /m);
    expect((await get(base, '/-/healthy')).status).toBe(200);
    expect((await get(base, '/-/ready')).status).toBe(200);
    const landing = await get(base, '/');
    for (const href of ['/metrics', '/-/healthy', '/-/ready'])
      expect(landing.body).toContain(`href="${href}"`);
  });

  it('passes promtool check metrics', async () => {
    const file = join(dir, 'promtool.yaml');
    writeFileSync(file, config('a'));
    const { base } = await startDaemon(file);
    const body = (await get(base, '/metrics')).body;
    // promtool exits non-zero and prints each problem on lint failures; a missing promtool fails this test loudly.
    const out = execFileSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8' });
    expect(out.trim()).toBe('');
  });

  it('keeps the running config when a reload finds a broken file, and says so in the gauge', async () => {
    const file = join(dir, 'reload.yaml');
    writeFileSync(file, config('first'));
    const { d, base, lines } = await startDaemon(file);
    expect(d.loaded.config.targets[0]!.name).toBe('first');

    writeFileSync(file, config('second'));
    expect(await get(base, '/-/reload', 'POST')).toMatchObject({ status: 200 });
    expect(d.loaded.config.targets[0]!.name).toBe('second');

    writeFileSync(file, config('third').replace('http://127.0.0.1:9', 'nonsense'));
    const failed = await get(base, '/-/reload', 'POST');
    expect(failed.status).toBe(500);
    expect(failed.body).toMatch(/targets\[0\]\.endpoints\[0\]\.url/);
    expect(d.loaded.config.targets[0]!.name).toBe('second');
    const metrics = (await get(base, '/metrics')).body;
    expect(metrics).toMatch(/^wedgewatch_config_last_reload_successful 0$/m);
    expect((await get(base, '/-/ready')).status).toBe(200);
    expect(lines.join('')).toMatch(/reload failed; keeping the running configuration/);

    writeFileSync(file, config('fourth'));
    expect((await get(base, '/-/reload', 'POST')).status).toBe(200);
    expect((await get(base, '/metrics')).body).toMatch(/^wedgewatch_config_last_reload_successful 1$/m);
  });

  it('has no /-/reload unless web.enableLifecycle is true', async () => {
    const file = join(dir, 'nolifecycle.yaml');
    writeFileSync(file, config('a', false));
    const { base } = await startDaemon(file);
    expect((await get(base, '/-/reload', 'POST')).status).toBe(404);
  });
});

describe('wedgewatch run (process)', () => {
  it('reloads on SIGHUP, keeps serving on a broken file, and exits 0 on SIGTERM with keep-alive scrapers attached', async () => {
    const file = join(dir, 'proc.yaml');
    writeFileSync(file, config('proc').replace('127.0.0.1:0', '127.0.0.1:0'));
    const { child, out, exited } = startCli(['run', '--config', file, '--web.listen-address', '127.0.0.1:0']);
    try {
      const addr = await waitFor(() => /"address":"([^"]+)"/.exec(out.stderr)?.[1], {
        timeoutMs: 15_000,
        what: 'the daemon to log its address',
      });
      const base = `http://${addr}`;

      writeFileSync(file, 'targets: [oops');
      child.kill('SIGHUP');
      await waitFor(() => out.stderr.includes('reload failed'), { what: 'the failed reload to be logged' });
      const scrape = await request(`${base}/metrics`);
      expect(scrape.statusCode).toBe(200);
      expect(await scrape.body.text()).toMatch(/^wedgewatch_config_last_reload_successful 0$/m);

      // Scrapers that hold keep-alive connections open must not delay shutdown.
      const agents = Array.from({ length: 5 }, () => new Agent({ keepAliveTimeout: 60_000 }));
      for (const a of agents) {
        const r = await request(`${base}/metrics`, { dispatcher: a });
        await r.body.text();
      }
      child.kill('SIGTERM');
      // A server that waited for idle keep-alive connections would hold the exit until its keepAliveTimeout
      // (30 s, src/outputs/server/app.ts) closed them: the bound is a poll deadline below that, not a speed claim.
      let code: number | null | undefined;
      void exited.then((c) => (code = c));
      await waitFor(() => code !== undefined, {
        timeoutMs: 15_000,
        what: 'the daemon to exit while five scrapers hold keep-alive connections open',
      });
      await Promise.all(agents.map((a) => a.destroy()));
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('exits 2 when its port is taken, without probes keeping the process alive', async () => {
    const busy = net.createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (busy.address() as net.AddressInfo).port;
      const file = join(dir, 'busy.yaml');
      writeFileSync(
        file,
        config('busy') +
          '    probes: [{ name: health, kind: health, every: 1s, timeout: 1s, path: /health }]\n',
      );
      const { out, exited } = startCli([
        'run',
        '--config',
        file,
        '--web.listen-address',
        `127.0.0.1:${port}`,
      ]);
      expect(await exited).toBe(2);
      expect(out.stderr).toMatch(/failed to start: .*EADDRINUSE/);
    } finally {
      busy.close();
    }
  });

  it('exits 2 with the problems listed when the config is invalid at start', async () => {
    const file = join(dir, 'badstart.yaml');
    writeFileSync(file, 'targets: []\n');
    const { out, exited } = startCli(['run', '--config', file, '--web.listen-address', '127.0.0.1:0']);
    expect(await exited).toBe(2);
    expect(out.stderr).toMatch(/targets: at least one target is required/);
  });
});
