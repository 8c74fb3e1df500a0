// The whole alerting path with real binaries, for the end-to-end test and the page-latency bench:
// simulator → wedgewatch daemon (in process) → Prometheus (1 s scrape/eval, the shipped rules) →
// Alertmanager (the shipped routing, receivers rewritten to a webhook here). Everything on 127.0.0.1.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import { Daemon } from '../../src/daemon.js';
import { createLogger } from '../../src/lib/logger.js';
import { startSim, type Sim } from '../../src/sim/index.js';
import { waitFor } from '../helpers/wait.js';
import { AM_CONFIG, RULES, requireBinary } from './tools.js';

export interface WebhookAlert {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface Notification {
  receiver: string;
  status: string;
  /** Alertmanager's aggregation group: one group is one incident (one page). */
  groupKey: string;
  alerts: WebhookAlert[];
  receivedAt: number;
}

export interface Pipeline {
  sim: Sim;
  daemon: Daemon;
  promUrl: string;
  notifications: Notification[];
  /** Unix ms the pipeline became ready (Prometheus sees up == 1). */
  readyAt: number;
  watchedFile: string;
  stop(): Promise<void>;
}

export const TARGET = 'pd';

export interface PipelineOptions {
  /** Prometheus scrape and rule evaluation interval (default 1s; the SRE run used 5s). */
  intervalSeconds?: number;
  /** Cut Alertmanager's group_wait/group_interval to seconds (see alertmanagerTestConfig). */
  fastTimings?: boolean;
  /** A proxy hop in front of the router, probed over fresh and keep-alive connections (keepalive_stall). */
  proxy?: boolean;
  /** A toolcall probe on the router (toolcall_leak). */
  toolcall?: boolean;
  /** A canary probe on the router, fresh connections (kv_corruption: WedgewatchWrongOutput). */
  canary?: boolean;
  /** Probe interval for the chat and toolcall probes (default 1s). */
  probeEvery?: string;
}

async function freePort(): Promise<number> {
  const srv = createNetServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

interface RouteTimings {
  group_wait?: string;
  group_interval?: string;
  repeat_interval?: string;
  routes?: RouteTimings[];
}

/**
 * The shipped Alertmanager config with every receiver's URL pointed at the test webhook and its templates
 * made absolute; routing, grouping and inhibition unchanged. With `fastTimings`, every route's group_wait
 * and group_interval are cut to seconds (the test suite cannot wait 30 s per notification); the bench runs
 * the shipped timings.
 */
export function alertmanagerTestConfig(hookBase: string, opts: { fastTimings?: boolean } = {}): string {
  const cfg = parseYaml(readFileSync(AM_CONFIG, 'utf8')) as {
    templates?: string[];
    route: RouteTimings;
    receivers: { name: string; webhook_configs?: { url: string }[] }[];
  };
  for (const r of cfg.receivers) {
    if (!r.webhook_configs?.length) throw new Error(`receiver ${r.name} has no webhook_configs to rewrite`);
    for (const w of r.webhook_configs) w.url = `${hookBase}/${r.name}`;
  }
  cfg.templates = cfg.templates?.map((t) => (t.startsWith('/') ? t : join(dirname(AM_CONFIG), t)));
  if (opts.fastTimings) {
    const cut = (r: RouteTimings) => {
      if (r.group_wait !== undefined && r.group_wait !== '0s') r.group_wait = '1s';
      if (r.group_interval !== undefined) r.group_interval = '2s';
      r.routes?.forEach(cut);
    };
    cut(cfg.route);
  }
  return stringify(cfg);
}

export async function promQuery(
  promUrl: string,
  expr: string,
): Promise<{ metric: Record<string, string> }[]> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`, {
    signal: AbortSignal.timeout(5000),
  });
  const body = (await res.json()) as {
    status: string;
    error?: string;
    data: { result: { metric: Record<string, string> }[] };
  };
  if (body.status !== 'success') throw new Error(`query ${expr}: ${body.error}`);
  return body.data.result;
}

export async function promQueryRange(promUrl: string, expr: string, startMs: number, endMs: number) {
  const q = new URLSearchParams({
    query: expr,
    start: String(startMs / 1000),
    end: String(endMs / 1000),
    step: '1',
  });
  const res = await fetch(`${promUrl}/api/v1/query_range?${q}`, { signal: AbortSignal.timeout(5000) });
  const body = (await res.json()) as { status: string; error?: string; data: { result: unknown[] } };
  if (body.status !== 'success') throw new Error(`query_range ${expr}: ${body.error}`);
  return body.data.result;
}

function spawnTool(bin: string, args: string[], procs: ChildProcess[]): ChildProcess {
  const child = spawn(requireBinary(bin), args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  child.on('exit', (code, signal) => {
    if (code !== 0 && signal === null) process.stderr.write(`${bin} exited ${code}: ${stderr}\n`);
  });
  procs.push(child);
  return child;
}

export async function startPipeline(opts: PipelineOptions = {}): Promise<Pipeline> {
  const every = opts.probeEvery ?? '1s';
  const interval = `${opts.intervalSeconds ?? 1}s`;
  const dir = mkdtempSync(join(tmpdir(), 'wedgewatch-e2e-'));
  const procs: ChildProcess[] = [];
  const notifications: Notification[] = [];
  let hook: Server | undefined;
  let sim: Sim | undefined;
  let daemon: Daemon | undefined;
  const stop = async () => {
    for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGTERM');
    await Promise.all(
      procs.map((p) =>
        p.exitCode !== null || p.signalCode !== null ? undefined : new Promise((r) => p.once('exit', r)),
      ),
    );
    await daemon?.stop();
    await sim?.stop();
    if (hook) await new Promise((r) => hook!.close(r));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    hook = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => {
        if (body.length < 1 << 20) body += d.toString();
      });
      req.on('end', () => {
        const n = JSON.parse(body) as Omit<Notification, 'receiver' | 'receivedAt'>;
        notifications.push({ ...n, receiver: (req.url ?? '').slice(1), receivedAt: Date.now() });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => hook!.listen(0, '127.0.0.1', resolve));
    const hookBase = `http://127.0.0.1:${(hook.address() as { port: number }).port}`;

    sim = await startSim({
      logDir: join(dir, 'logs'),
      waitingTimeoutMs: 3000,
      bootstrapTimeoutMs: 3000,
      proxy: opts.proxy === true,
    });
    const watchedFile = join(dir, 'serve_prefill.sh');
    writeFileSync(
      watchedFile,
      '#!/bin/sh\nexec python -m sglang.launch_server --disaggregation-mode prefill\n',
    );
    mkdirSync(join(dir, 'state'));
    const configPath = join(dir, 'wedgewatch.yaml');
    writeFileSync(
      configPath,
      stringify({
        web: { listenAddress: '127.0.0.1:0' },
        stateDir: join(dir, 'state'),
        targets: [
          {
            name: TARGET,
            endpoints: [
              ...(opts.proxy ? [{ name: 'proxy', url: sim.urls.proxy! }] : []),
              { name: 'router', url: sim.urls.router },
            ],
            model: 'sim-model',
            probes: [
              { name: 'chat', kind: 'chat', every, timeout: '5s', conn: ['fresh', 'keepalive'] },
              {
                name: 'health',
                kind: 'health',
                every: '1s',
                timeout: '2s',
                path: '/health',
                endpoints: ['router'],
              },
              ...(opts.toolcall
                ? [
                    {
                      name: 'tools',
                      kind: 'toolcall',
                      every,
                      timeout: '5s',
                      // Two cells fit the fast cadence; the full seven-request matrix would overlap itself.
                      cells: ['auto', 'auto/nonstream'],
                      endpoints: ['router'],
                      conn: ['fresh'],
                    },
                  ]
                : []),
              ...(opts.canary
                ? [
                    {
                      name: 'canary',
                      kind: 'canary',
                      every,
                      timeout: '5s',
                      endpoints: ['router'],
                      conn: ['fresh'],
                    },
                  ]
                : []),
            ],
            logs: [
              { service: 'prefill', path: sim.logFiles.prefill, from: 'start' },
              { service: 'decode', path: sim.logFiles.decode, from: 'start' },
              { service: 'router', path: sim.logFiles.router, from: 'start', packs: [] },
            ],
            engines: [
              { service: 'decode', metrics: `${sim.urls.decode}/metrics`, every: '1s' },
              { service: 'prefill', metrics: `${sim.urls.prefill}/metrics`, every: '1s' },
            ],
            detect: { wedgeAfter: 2, recoverAfter: 2, confirmInterval: '1s' },
            remediate: { command: ['/bin/true'], dryRun: true, after: '1s', cooldown: '1s', maxPerHour: 100 },
            watch: [watchedFile],
          },
        ],
      }),
    );
    daemon = new Daemon({ configPath, logger: createLogger({ level: 'warn' }) });
    await daemon.start();
    const daemonAddr = daemon.address();

    const amPort = await freePort();
    const amFile = join(dir, 'alertmanager.yml');
    writeFileSync(amFile, alertmanagerTestConfig(hookBase, { fastTimings: opts.fastTimings }));
    spawnTool(
      'prometheus-alertmanager',
      [
        `--config.file=${amFile}`,
        `--storage.path=${join(dir, 'am')}`,
        `--web.listen-address=127.0.0.1:${amPort}`,
        '--cluster.listen-address=',
        '--log.level=warn',
      ],
      procs,
    );
    const promPort = await freePort();
    const promFile = join(dir, 'prometheus.yml');
    writeFileSync(
      promFile,
      stringify({
        global: { scrape_interval: interval, scrape_timeout: interval, evaluation_interval: interval },
        rule_files: [RULES],
        alerting: { alertmanagers: [{ static_configs: [{ targets: [`127.0.0.1:${amPort}`] }] }] },
        scrape_configs: [{ job_name: 'wedgewatch', static_configs: [{ targets: [daemonAddr] }] }],
      }),
    );
    spawnTool(
      'prometheus',
      [
        `--config.file=${promFile}`,
        `--storage.tsdb.path=${join(dir, 'prom')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
        '--rules.alert.resend-delay=1s',
        '--log.level=warn',
      ],
      procs,
    );
    const promUrl = `http://127.0.0.1:${promPort}`;
    const ok = async (url: string) => (await fetch(url, { signal: AbortSignal.timeout(2000) })).ok;
    await waitFor(() => ok(`http://127.0.0.1:${amPort}/-/ready`), {
      timeoutMs: 20_000,
      what: 'alertmanager ready',
    });
    await waitFor(() => ok(`${promUrl}/-/ready`), { timeoutMs: 20_000, what: 'prometheus ready' });
    await waitFor(async () => (await promQuery(promUrl, 'up{job="wedgewatch"} == 1')).length === 1, {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: 'Prometheus scraping wedgewatch (up == 1)',
    });
    await waitFor(
      async () => {
        const r = await fetch(`${promUrl}/api/v1/alertmanagers`, { signal: AbortSignal.timeout(2000) });
        const b = (await r.json()) as { data: { activeAlertmanagers: unknown[] } };
        return b.data.activeAlertmanagers.length === 1;
      },
      { timeoutMs: 20_000, intervalMs: 200, what: 'Prometheus connected to Alertmanager' },
    );
    return { sim, daemon, promUrl, notifications, readyAt: Date.now(), watchedFile, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Enables nixl_abort_unhandled and cancels one streaming request: decode sends ABORT to prefill, whose
 * bootstrap thread dies. Resolves with the Unix ms the traceback was written.
 */
export async function tripThreadDeath(sim: Sim): Promise<number> {
  let died: number | undefined;
  const off = sim.onEvent((ev) => {
    if (ev.kind === 'thread_death') died ??= ev.at;
  });
  try {
    sim.enableFault('nixl_abort_unhandled');
    for (let attempt = 0; attempt < 5 && died === undefined; attempt++) {
      const ctl = new AbortController();
      const res = await fetch(`${sim.urls.router}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'sim-model',
          stream: true,
          max_tokens: 4096,
          messages: [{ role: 'user', content: 'write a long story' }],
        }),
        signal: ctl.signal,
      }).catch(() => undefined);
      ctl.abort();
      await res?.body?.cancel().catch(() => undefined);
      await waitFor(() => died !== undefined, { timeoutMs: 3000, what: 'bootstrap thread death' }).catch(
        () => undefined,
      );
    }
    if (died === undefined) throw new Error('the cancelled request did not kill the bootstrap thread');
    return died;
  } finally {
    off();
  }
}

export function findAlert(
  ns: Notification[],
  receiver: string,
  alertname: string,
  status: 'firing' | 'resolved',
) {
  for (const n of ns) {
    if (n.receiver !== receiver) continue;
    const a = n.alerts.find((x) => x.labels.alertname === alertname && x.status === status);
    if (a) return { notification: n, alert: a };
  }
  return undefined;
}
