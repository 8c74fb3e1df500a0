// A simulated SGLang prefill/decode-disaggregated deployment with fault injection: loopback router, prefill
// and decode services (plus an optional proxy hop and a control API), SGLang-format log files, sglang:* metrics.
// Used by `wedgewatch sim`, `wedgewatch demo` and the integration tests.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { controlHandler } from './control.js';
import { simThreadDump } from './dump.js';
import { engineHandler } from './engine-http.js';
import { SimEvents } from './events.js';
import { FaultSet, faultSwitch } from './faults/set.js';
import {
  SERVICE_NAMES,
  type FaultControl,
  type FaultName,
  type FaultParams,
  type ServiceName,
} from './faults/types.js';
import { Service } from './http.js';
import { LogFile } from './logfile.js';
import * as fmt from './logfmt.js';
import { DEFAULT_MODEL, LEGACY_DIALECT, PdModel, type ModelParams, type SimEvent } from './pd.js';
import { stepJitter, type JitterOptions } from './jitter.js';
import { Proxy } from './proxy.js';
import { routerHandler } from './router.js';
import { RouterStats } from './router-metrics.js';
import { startWorkers, type SimWorkers } from './pd-workers.js';
import { WorkerRegistry } from './workers.js';

export type { FaultName, FaultParams, ServiceName } from './faults/types.js';
export type { ModelParams, SimEvent } from './pd.js';
export type { JitterOptions } from './jitter.js';
export { DEFAULT_MODEL } from './pd.js';
export type { SglangFormat } from './logfmt.js';
export { SGLANG_FORMATS } from './logfmt.js';
export { FAULT_NAMES, isFaultName } from './faults/registry.js';

export interface SimOptions {
  logDir?: string;
  /** Adds a keep-alive-capable reverse proxy hop in front of the router (keepalive_stall enables it too). */
  proxy?: boolean;
  faults?: Array<FaultName | { name: FaultName; params?: FaultParams }>;
  model?: Partial<ModelParams>;
  /** SGLANG_DISAGGREGATION_WAITING_TIMEOUT analogue (ms). */
  waitingTimeoutMs?: number;
  /** SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT analogue (ms). */
  bootstrapTimeoutMs?: number;
  modelName?: string;
  /** SGLANG_HEALTH_CHECK_TIMEOUT analogue for /health_generate (ms, default 20 s). */
  healthGenerateTimeoutMs?: number;
  ports?: Partial<Record<'router' | 'prefill' | 'decode' | 'proxy' | 'control', number>>;
  /** Which SGLang build's log lines and metric names (default `current`: SGLang main 2026-08). */
  sglangFormat?: fmt.SglangFormat;
  /** TP ranks per engine in the current dialect (each prints its per-request failure lines; default 2). */
  tpRanks?: number;
  /** SGLANG_DISAGGREGATION_HEARTBEAT_INTERVAL analogue (ms, current dialect; default 5 s as upstream). */
  heartbeatIntervalMs?: number;
  /** Per-step timing noise (src/sim/jitter.ts); default none. */
  jitter?: JitterOptions;
  /**
   * Run each PD leg as a real Python process too (src/sim/pd-workers.ts): its pid in the pid file, its bootstrap thread a
   * real thread that dies on nixl_abort_unhandled (issue 42). Default off; the demo turns it on.
   */
  workers?: boolean;
}

export interface SimState {
  faults: Record<string, unknown>;
  bootstrapThreadAlive: boolean;
  running: number;
  queued: number;
  finishedTotal: number;
  generatedTokensTotal: number;
  [k: string]: unknown;
}

export interface Sim {
  urls: { router: string; prefill: string; decode: string; proxy?: string; control: string };
  logDir: string;
  logFiles: { prefill: string; decode: string; router: string };
  /**
   * Each engine's pid file, as SGLang deployments keep: its worker process's id with `workers`, else the simulator's
   * own (the engines live in it).
   */
  pidFiles: { prefill: string; decode: string };
  /** Why the legs run without worker processes, when `workers` was asked for and python3 could not run. */
  workersProblem?: string;
  enableFault(name: FaultName, params?: FaultParams): void;
  disableFault(name: FaultName): void;
  /** A restart of prefill clears a dead bootstrap thread; any restart clears crash/health_fail on that service. */
  restart(service: ServiceName): Promise<void>;
  state(): SimState;
  /** The recent simulator events (bounded), oldest first. */
  events(): SimEvent[];
  /** Subscribes to simulator events; returns the unsubscribe function. */
  onEvent(fn: (ev: SimEvent) => void): () => void;
  stop(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 300_000;
/** SGLang's default --disaggregation-bootstrap-port, what the router lists for the prefill worker. */
const SIM_BOOTSTRAP_PORT = 8998;
const DEFAULT_HEALTH_GENERATE_TIMEOUT_MS = 20_000;

export async function startSim(opts: SimOptions = {}): Promise<Sim> {
  const logDir = opts.logDir ?? mkdtempSync(join(tmpdir(), 'wedgewatch-sim-'));
  const logFiles = {
    prefill: join(logDir, 'prefill.log'),
    decode: join(logDir, 'decode.log'),
    router: join(logDir, 'router.log'),
  };
  const pidFiles = { prefill: join(logDir, 'prefill.pid'), decode: join(logDir, 'decode.pid') };
  // A logDir given by the caller may not exist yet (the log files create theirs, the pid files do not).
  mkdirSync(logDir, { recursive: true });
  for (const f of Object.values(pidFiles)) writeFileSync(f, `${process.pid}\n`);
  const pdWorkers: SimWorkers | undefined = opts.workers === true ? await startWorkers(pidFiles) : undefined;
  const logs = {
    prefill: new LogFile(logFiles.prefill),
    decode: new LogFile(logFiles.decode),
    router: new LogFile(logFiles.router),
  };
  const initialFaults = (opts.faults ?? []).map((f) => (typeof f === 'string' ? { name: f, params: {} } : f));
  const withProxy = opts.proxy === true || initialFaults.some((f) => f.name === 'keepalive_stall');
  const modelName = opts.modelName ?? 'sim-model';
  const sglangFormat = opts.sglangFormat ?? 'current';
  const ports = opts.ports ?? {};

  const simEvents = new SimEvents();
  const emit = simEvents.emit;

  // Requests that need the decode scheduler (get_server_info) wait here while it is stuck.
  const schedulerWaiters = new Map<ServerResponse, () => void>();
  const flushWaiters = () => {
    for (const [res, respond] of schedulerWaiters) if (!res.destroyed) respond();
    schedulerWaiters.clear();
  };

  // Services are created below; the fault control and the model refer to them lazily.
  const services = {} as Record<ServiceName | 'control', Service>;
  const grammarHeld = new Set<() => void>();
  let proxy: Proxy | undefined;

  const ctl: FaultControl = {
    engine: 'sglang',
    hasProxy: withProxy,
    killBootstrapThread: () => {
      if (pd.prefill.threadAlive && pd.prefill.up) pdWorkers?.killBootstrapThread();
      pd.killBootstrapThread();
    },
    setDecodeStalled: (stalled) => {
      pd.setDecodeStalled(stalled);
      if (!stalled) flushWaiters();
    },
    crashService: (s) => crashService(s),
    restartService: (s) => restartService(s),
    releaseHeld: () => proxy?.releaseHeld(),
    releaseStructured: () => {
      for (const release of [...grammarHeld]) release();
    },
    submitOrphans: (n, agedMs) => {
      const held = Array.from({ length: n }, () => {
        const tracked = routerStats.begin(agedMs);
        const quiet = { token() {}, finish() {}, fail() {} };
        return { tracked, req: pd.submit(16, Number.MAX_SAFE_INTEGER, undefined, quiet) };
      });
      return () => {
        for (const h of held) {
          pd.abort(h.req);
          routerStats.end(h.tracked, '/v1/chat/completions', 499);
        }
      };
    },
  };
  const routerStats = new RouterStats();
  const faults = new FaultSet(ctl);
  const jitter = stepJitter(opts.jitter ?? { sd: 0 });

  const pd = new PdModel(
    { ...DEFAULT_MODEL, ...opts.model },
    {
      waitingMs: opts.waitingTimeoutMs ?? DEFAULT_TIMEOUT_MS,
      bootstrapMs: opts.bootstrapTimeoutMs ?? DEFAULT_TIMEOUT_MS,
    },
    { prefill: logs.prefill, decode: logs.decode },
    {
      stepFactor: () => faults.stepFactor() * jitter(),
      abortFrame: () => faults.abortFrame(),
      emit,
      bootstrapAddr: () => `127.0.0.1:${services.prefill.port}`,
      leakedQueue: (service) => faults.leakedQueue(service),
      failsKvTransfer: () => faults.failsKvTransfer(),
      strandedQueue: (service) => faults.strandedQueue(service),
    },
    sglangFormat === 'legacy'
      ? LEGACY_DIALECT
      : {
          format: 'current',
          tpRanks: opts.tpRanks ?? 2,
          heartbeatMs: opts.heartbeatIntervalMs ?? 5_000,
          heartbeatFailures: 2,
        },
  );

  const whenSchedulerFree = (role: 'prefill' | 'decode', res: ServerResponse, respond: () => void) => {
    if (role === 'decode' && pd.decode.stalled) {
      schedulerWaiters.set(res, respond);
      res.on('close', () => schedulerWaiters.delete(res));
    } else respond();
  };
  for (const role of ['prefill', 'decode'] as const) {
    services[role] = new Service(
      role,
      engineHandler({
        role,
        pd,
        faults,
        modelName,
        sglangFormat,
        log: logs[role],
        port: () => services[role].port,
        healthGenerateTimeoutMs: opts.healthGenerateTimeoutMs ?? DEFAULT_HEALTH_GENERATE_TIMEOUT_MS,
        whenSchedulerFree,
      }),
      ports[role] ?? 0,
    );
  }
  // Made on the router's first request: by then prefill and decode listen, and a restart keeps their ports.
  let workers: WorkerRegistry | undefined;
  const routerWorkers = () =>
    (workers ??= new WorkerRegistry(
      [
        { url: services.prefill.url, worker_type: 'prefill', bootstrap_port: SIM_BOOTSTRAP_PORT },
        { url: services.decode.url, worker_type: 'decode' },
      ],
      (url) => [services.prefill.url, services.decode.url].includes(url.replace(/\/+$/, '')),
    ));
  let routerConnPort = 40_000;
  services.router = new Service(
    'router',
    routerHandler({
      pd,
      faults,
      modelName,
      logs,
      engineUp: (s) => services[s].up,
      grammarHeld,
      behindProxy: withProxy,
      stats: routerStats,
      workers: routerWorkers,
      // The router's pooled connections to the engines; one address per request is close enough.
      routerClientAddr: () =>
        `127.0.0.1:${(routerConnPort = routerConnPort >= 60_000 ? 40_000 : routerConnPort + 1)}`,
    }),
    ports.router ?? 0,
  );
  if (withProxy) {
    const p = new Proxy({
      upstreamPort: () => services.router.port,
      stallReused: () => faults.stallsReusedConnection(),
      onStall: () =>
        emit({ service: 'proxy', kind: 'stall', message: 'holding a request on a reused connection' }),
      healthStatus: () => faults.healthStatus('proxy'),
    });
    proxy = p;
    services.proxy = new Service('proxy', p.handler, ports.proxy ?? 0);
  }

  const banner = (s: ServiceName) => {
    const now = new Date();
    if (s === 'prefill' || s === 'decode') {
      logs[s].write([
        fmt.httpLine(now, `INFO:     Uvicorn running on ${services[s].url} (Press CTRL+C to quit)`),
        fmt.httpLine(now, 'The server is fired up and ready to roll!'),
      ]);
    } else if (s === 'router') {
      logs.router.write(
        fmt.routerLine(
          now,
          'INFO',
          'smg::server',
          'src/server.rs:794',
          `Starting router on 127.0.0.1:${services.router.port}`,
        ),
      );
    }
  };

  async function crashService(s: ServiceName): Promise<void> {
    const svc = services[s];
    if (!svc) throw new Error(`no ${s} service in this simulator`);
    await svc.close();
    if (s === 'prefill') pd.prefillDown();
    if (s === 'decode') {
      pd.decodeDown();
      for (const res of schedulerWaiters.keys()) res.destroy();
      schedulerWaiters.clear();
    }
    if (s === 'prefill' || s === 'decode') await pdWorkers?.crash(s);
    emit({ service: s, kind: 'crash', message: `${s} port ${svc.port} closed` });
  }

  async function restartService(s: ServiceName): Promise<void> {
    const svc = services[s];
    if (!svc) throw new Error(`no ${s} service in this simulator`);
    await svc.close();
    for (const name of ['crash', 'health_fail'] as const)
      if (faults.params(name)?.service === s) faults.forget(name);
    if (s === 'prefill') {
      pd.prefillDown();
      pd.prefillUp();
    }
    if (s === 'prefill' || s === 'decode') await pdWorkers?.restart(s);
    if (s === 'decode') {
      faults.forget('decode_stall');
      faults.forget('health_503');
      pd.decodeDown();
      pd.decodeUp();
      for (const res of schedulerWaiters.keys()) res.destroy();
      schedulerWaiters.clear();
    }
    await svc.listen();
    banner(s);
    emit({ service: s, kind: 'restart', message: `${s} restarted on port ${svc.port}` });
  }

  const started: Service[] = [];
  try {
    for (const s of ['prefill', 'decode', 'router', 'proxy'] as const) {
      if (!services[s]) continue;
      await services[s].listen();
      started.push(services[s]);
      banner(s);
    }
  } catch (err) {
    for (const s of started) await s.close();
    for (const l of Object.values(logs)) l.close();
    await pdWorkers?.stop();
    throw err;
  }

  const faultsEnabled = () => faults.snapshot();
  const state = (): SimState => ({
    faults: faults.snapshot(),
    bootstrapThreadAlive: pd.prefill.threadAlive,
    running: pd.decode.running.length,
    queued: pd.decode.waiting.length,
    finishedTotal: pd.finishedTotal,
    generatedTokensTotal: pd.generatedTokensTotal,
    abortedTotal: pd.abortedTotal,
    failedTotal: pd.failedTotal,
    prefillBootstrapQueue: pd.prefill.bootstrapQueue.size,
    prefillInflight: pd.prefill.inflight.size,
    decodeTransferQueue: pd.decode.transferQueue.size,
    decodeStalled: pd.decode.stalled,
    decodePendingAborts: pd.decode.pendingAborts.size,
    decodeSteps: pd.decode.steps,
    services: Object.fromEntries(
      SERVICE_NAMES.filter((s) => services[s]).map((s) => [
        s,
        { up: services[s].up, port: services[s].port },
      ]),
    ),
  });

  const reportFailure = (what: string) => (err: unknown) =>
    emit({ service: 'sim', kind: 'error', message: `${what}: ${(err as Error).message}` });
  const { enable, disable } = faultSwitch(faults, emit);
  const hasService = (s: string): s is ServiceName =>
    (SERVICE_NAMES as readonly string[]).includes(s) && !!services[s as ServiceName];

  services.control = new Service(
    'control',
    controlHandler({
      faultsEnabled,
      enableFault: enable,
      disableFault: disable,
      restart: (s) => restartService(s as ServiceName),
      state,
      hasService,
      dump: (role) => simThreadDump(role, pd, process.pid),
    }),
    ports.control ?? 0,
  );
  await services.control.listen();

  let stopped = false;
  const sim: Sim = {
    urls: {
      router: services.router.url,
      prefill: services.prefill.url,
      decode: services.decode.url,
      ...(services.proxy ? { proxy: services.proxy.url } : {}),
      control: services.control.url,
    },
    logDir,
    logFiles,
    pidFiles,
    ...(pdWorkers?.problem !== undefined ? { workersProblem: pdWorkers.problem } : {}),
    enableFault(name, params) {
      // Validation errors throw here; an async effect (crash closing a port) settles later.
      enable(name, params).catch(reportFailure(`enabling ${name}`));
    },
    disableFault(name) {
      void disable(name).catch(reportFailure(`disabling ${name}`));
    },
    restart: (s) => {
      if (!hasService(s)) return Promise.reject(new Error(`no ${s} service in this simulator`));
      return restartService(s);
    },
    state,
    events: () => simEvents.list(),
    onEvent: (fn) => simEvents.onEvent(fn),
    async stop() {
      if (stopped) return;
      stopped = true;
      pd.stop();
      proxy?.close();
      for (const res of schedulerWaiters.keys()) res.destroy();
      schedulerWaiters.clear();
      for (const s of Object.values(services)) await s.close();
      for (const l of Object.values(logs)) l.close();
      await pdWorkers?.stop();
      simEvents.clear();
    },
  };

  try {
    for (const f of initialFaults) await enable(f.name, f.params);
  } catch (err) {
    await sim.stop();
    throw err;
  }
  return sim;
}
