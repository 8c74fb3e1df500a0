// A simulated vLLM V1 OpenAI-compatible API server (`wedgewatch sim --engine vllm`): one loopback port with
// /v1/chat/completions, /v1/models, /health, /load, /metrics; one log file in vLLM's format (process prefixes,
// `\r`-framed records, the periodic stats line, uvicorn access lines); vllm:* metrics; the shared fault
// registry and control API. The engine core lives in this process; its pid is the API server's + 1.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { controlHandler } from '../control.js';
import { SimEvents } from '../events.js';
import { FaultSet, faultSwitch } from '../faults/set.js';
import type { FaultControl, FaultName, FaultParams } from '../faults/types.js';
import { Service } from '../http.js';
import { LogFile } from '../logfile.js';
import type { SimEvent } from '../pd.js';
import { DEFAULT_ENGINE, VllmEngine, type EngineParams } from './engine.js';
import * as fmt from './logfmt.js';
import { serverHandler } from './server.js';

export interface VllmSimOptions {
  logDir?: string;
  faults?: Array<FaultName | { name: FaultName; params?: FaultParams }>;
  modelName?: string;
  engine?: Partial<EngineParams>;
  ports?: Partial<Record<'server' | 'control', number>>;
  /** launcher.py watchdog_loop's VLLM_WATCHDOG_TIME_S analogue (ms, default 5 s). */
  watchdogMs?: number;
  defaultMaxTokens?: number;
  /** Close the connection after each streamed response, as llama-server does (../http.ts ServiceOptions). */
  closeAfterStream?: boolean;
}

export interface VllmSim {
  engine: 'vllm';
  urls: { server: string; control: string };
  logDir: string;
  logFiles: { server: string };
  enableFault(name: FaultName, params?: FaultParams): void;
  disableFault(name: FaultName): void;
  /** A new API server and engine core on the same port (what restarting the container does). */
  restart(): Promise<void>;
  state(): Record<string, unknown>;
  events(): SimEvent[];
  onEvent(fn: (ev: SimEvent) => void): () => void;
  stop(): Promise<void>;
}

const VERSION = '0.0.0+sim';

export async function startVllmSim(opts: VllmSimOptions = {}): Promise<VllmSim> {
  const logDir = opts.logDir ?? mkdtempSync(join(tmpdir(), 'wedgewatch-vllm-sim-'));
  mkdirSync(logDir, { recursive: true });
  const logFiles = { server: join(logDir, 'vllm.log') };
  const log = new LogFile(logFiles.server);
  const modelName = opts.modelName ?? 'sim-model';
  const params = { ...DEFAULT_ENGINE, ...opts.engine };
  const watchdogMs = opts.watchdogMs ?? 5_000;
  const pids = { api: process.pid, core: process.pid + 1 };

  const simEvents = new SimEvents();
  const emit = simEvents.emit;

  const notHere = (what: string) => () => {
    throw new Error(`${what}: not in the vLLM simulator`);
  };
  let keepAlive = false;
  let shutdownTimer: NodeJS.Timeout | undefined;
  const ctl: FaultControl = {
    engine: 'vllm',
    hasProxy: false,
    killBootstrapThread: notHere('killBootstrapThread'),
    setDecodeStalled: notHere('setDecodeStalled'),
    crashService: () => Promise.reject(new Error('crashService: not in the vLLM simulator')),
    restartService: () => Promise.reject(new Error('restartService: not in the vLLM simulator')),
    releaseHeld: () => undefined,
    releaseStructured: () => undefined,
    vllm: {
      killEngineCore(stays) {
        keepAlive = stays;
        engine.kill();
        emit({ service: 'server', kind: 'crash', message: 'engine core died (EngineDeadError)' });
        // launcher.py watchdog_loop: terminate_if_errored every VLLM_WATCHDOG_TIME_S.
        if (!stays) shutdownTimer ??= setTimeout(() => void shutdown(), watchdogMs);
      },
      setCoreHung(hung) {
        engine.setHung(hung, 0);
        emit({
          service: 'server',
          kind: hung ? 'stall' : 'resume',
          message: hung ? 'engine core stuck in a collective, logging nothing' : 'engine core steps again',
        });
      },
      setShmHang(hung, intervalMs) {
        engine.setHung(hung, intervalMs);
        emit({
          service: 'server',
          kind: hung ? 'stall' : 'resume',
          message: hung ? 'engine core blocked in a shm broadcast' : 'engine core steps again',
        });
      },
    },
  };
  const faults = new FaultSet(ctl);
  const newEngine = () =>
    new VllmEngine(params, {
      stepFactor: () => faults.stepFactor(),
      failsKvLoad: () => faults.failsKvLoad(),
      pauseMs: () => faults.pauseMs(),
      maxRunning: () => faults.maxRunning(),
      log,
      pids,
    });
  let engine = newEngine();

  const server = new Service(
    'server',
    serverHandler({
      engine: () => engine,
      faults,
      modelName,
      log,
      defaultMaxTokens: opts.defaultMaxTokens ?? 256,
      onEngineDeadError: () => {
        // launcher.py runtime_exception_handler → terminate_if_errored, after the response went out.
        if (!keepAlive) setImmediate(() => void shutdown());
      },
    }),
    opts.ports?.server ?? 0,
    undefined,
    { closeAfterStream: opts.closeAfterStream },
  );

  /** uvicorn's shutdown after `server.should_exit = True`: its lines, then the port closes. */
  async function shutdown(): Promise<void> {
    clearTimeout(shutdownTimer);
    shutdownTimer = undefined;
    if (!server.up) return;
    log.write(
      ['Shutting down', 'Waiting for application shutdown.', 'Application shutdown complete.'].map((m) =>
        fmt.uvicornLine(pids.api, m),
      ),
    );
    log.write(fmt.uvicornLine(pids.api, `Finished server process [${pids.api}]`));
    await server.close();
    emit({ service: 'server', kind: 'crash', message: `API server exited, port ${server.port} closed` });
  }

  const banner = () => {
    const at = new Date();
    const api = (file: string, line: number, msg: string) =>
      fmt.vllmRecord(at, { proc: 'APIServer', pid: pids.api, file, line }, 'INFO', msg);
    log.write([
      // vllm/entrypoints/openai/api_server.py run_server_worker / setup_server (main 2026-08).
      ...api('api_server.py', 1885, `vLLM API server version ${VERSION}`),
      // vllm/v1/engine/core.py EngineCore.__init__: "Initializing a V1 LLM engine (v%s) with config: %s".
      ...fmt.vllmRecord(
        at,
        { proc: 'EngineCore_DP0', pid: pids.core, file: 'core.py', line: 93 },
        'INFO',
        `Initializing a V1 LLM engine (v${VERSION}) with config: model='${modelName}', served_model_name=${modelName}`,
      ),
      ...api('api_server.py', 1818, `Starting vLLM API server 0 on ${server.url}`),
      // uvicorn lifespan/startup lines (uvicorn/server.py, uvicorn/lifespan/on.py).
      fmt.uvicornLine(pids.api, `Started server process [${pids.api}]`),
      fmt.uvicornLine(pids.api, 'Waiting for application startup.'),
      fmt.uvicornLine(pids.api, 'Application startup complete.'),
    ]);
  };

  async function restart(): Promise<void> {
    clearTimeout(shutdownTimer);
    shutdownTimer = undefined;
    await server.close();
    engine.stop();
    for (const name of ['engine_core_death', 'shm_broadcast_hang', 'metrics_frozen'] as const)
      faults.forget(name);
    keepAlive = false;
    engine = newEngine();
    await server.listen();
    banner();
    emit({ service: 'server', kind: 'restart', message: `server restarted on port ${server.port}` });
  }

  await server.listen();
  banner();

  const state = () => ({
    faults: faults.snapshot(),
    up: server.up,
    engineDead: engine.dead,
    engineHung: engine.hung,
    ...engine.published,
    inflight: engine.inflight,
    counters: engine.counters,
    droppedOnClosed: server.droppedOnClosed,
  });
  const { enable, disable } = faultSwitch(faults, emit);
  const control = new Service(
    'control',
    controlHandler({
      engine: 'vllm',
      faultsEnabled: () => faults.snapshot(),
      enableFault: enable,
      disableFault: disable,
      restart: () => restart(),
      state,
      hasService: (s) => s === 'server',
      dump: () => 'no thread dump in the vLLM simulator\n',
    }),
    opts.ports?.control ?? 0,
  );
  await control.listen();

  let stopped = false;
  const sim: VllmSim = {
    engine: 'vllm',
    urls: { server: server.url, control: control.url },
    logDir,
    logFiles,
    enableFault(name, p) {
      // Validation errors (a fault for the other engine, a bad param) throw here, as in the SGLang sim.
      enable(name, p).catch((err: unknown) => {
        emit({ service: 'sim', kind: 'error', message: `enabling ${name}: ${(err as Error).message}` });
      });
    },
    disableFault(name) {
      void disable(name).catch((err: unknown) => {
        emit({ service: 'sim', kind: 'error', message: `disabling ${name}: ${(err as Error).message}` });
      });
    },
    restart,
    state,
    events: () => simEvents.list(),
    onEvent: (fn) => simEvents.onEvent(fn),
    async stop() {
      if (stopped) return;
      stopped = true;
      clearTimeout(shutdownTimer);
      engine.stop();
      await server.close();
      await control.close();
      log.close();
      simEvents.clear();
    },
  };
  try {
    for (const f of opts.faults ?? []) {
      const { name, params: p } = typeof f === 'string' ? { name: f, params: {} } : f;
      await enable(name, p);
    }
  } catch (err) {
    await sim.stop();
    throw err;
  }
  return sim;
}
