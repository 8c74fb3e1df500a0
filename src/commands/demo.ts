// `wedgewatch demo` (what `npm start` runs): the simulator plus the daemon watching it with an embedded config.
// It prints where to look and a live timeline; after `--replay-after` it replays the incident (an abort cascade
// with nixl_abort_unhandled armed) and the daemon is left to notice, remediate and recover. A second deployment
// serves the same model behind a model gateway (src/sim/gateway.ts): the wedged one is drained from the gateway
// while it is wedged and added back once it recovers (issue 43), the second one never (the pool rule).
import { Command, Option } from 'commander';
import { closeSync, mkdtempSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { ConfigError, loadConfigFile } from '../config/load.js';
import type { Daemon } from '../daemon.js';
import type { LogLevel } from '../lib/logger.js';
import { abortCascade } from '../sim/abort-cascade.js';
import { parseDurationArg } from '../sim/cli-args.js';
import { demoConfig, DEMO_PEER_TARGET, DEMO_TARGET } from '../sim/demo-config.js';
import { startGateway, type SimGateway } from '../sim/gateway.js';
import { startSim, type Sim } from '../sim/index.js';
import { createLogger } from '../lib/logger.js';
import { addLogFlags, EXIT } from './common.js';
import { journalTimeline } from './demo-timeline.js';
import { parseListenAddress } from '../outputs/server/listen.js';
import { runDaemonUntilSignal } from './run.js';
import { describeSim } from './sim.js';
import { which } from '../sources/node/pyspy.js';

export interface DemoContext {
  sim: Sim;
  daemon: Daemon;
  configPath: string;
  /** Adds a line to the demo's timeline, e.g. timeline('detector', 'sim-pd ok → wedged (kv_bootstrap_thread_dead)'). */
  timeline(source: string, message: string): void;
}

/** Something that adds to the demo once the daemon runs (e.g. printing state transitions); may return a cleanup. */
export type DemoExtension = (ctx: DemoContext) => void | (() => void);

export interface DemoOptions {
  listenAddress: string;
  replayAfterMs: number;
  logLevel: LogLevel;
  logFormat: 'json' | 'pretty';
  /** Where timeline lines go (default stdout). */
  onTimeline?: (line: string) => void;
  /** Where the daemon's own log goes (default wedgewatch.log in the demo's directory, named at start). */
  logFile?: string;
  extensions?: DemoExtension[];
}

/** The simulator's PD timeouts in the demo: short enough to watch, below the probes' 30 s timeout. */
const DEMO_PD_TIMEOUT_MS = 15_000;

/**
 * Fails before anything starts when the watchdog's listen address is taken: the daemon only finds out after its
 * probes and the simulator are running, and they would keep the process alive.
 */
async function assertListenable(addr: string): Promise<void> {
  const { host, port } = parseListenAddress(addr);
  if (port === 0) return;
  const s = createServer();
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.listen({ host, port, exclusive: true }, resolve);
  });
  await new Promise<void>((r) => s.close(() => r()));
}

export async function runDemo(opts: DemoOptions): Promise<void> {
  await assertListenable(opts.listenAddress);
  const print = opts.onTimeline ?? ((line: string) => process.stdout.write(line + '\n'));
  const t0 = Date.now();
  const timeline = (source: string, message: string) =>
    print(`[+${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${source.padEnd(9)} ${message}`);

  const pdTimeouts = { waitingTimeoutMs: DEMO_PD_TIMEOUT_MS, bootstrapTimeoutMs: DEMO_PD_TIMEOUT_MS };
  const sim = await startSim({ proxy: true, ...pdTimeouts, workers: true });
  const pySpy = await which('py-spy');
  let peer: Sim | undefined;
  let gateway: SimGateway | undefined;
  const stopSims = async () => {
    await gateway?.stop();
    await peer?.stop();
    await sim.stop();
  };
  try {
    peer = await startSim(pdTimeouts);
    gateway = await startGateway([sim.urls.router, peer.urls.router]);
  } catch (err) {
    await stopSims();
    throw err;
  }
  const traffic = { peer, gateway: gateway.url };
  const gw = gateway;
  const dir = mkdtempSync(join(tmpdir(), 'wedgewatch-demo-'));
  const configPath = join(dir, 'wedgewatch-demo.yaml');
  writeFileSync(
    configPath,
    demoConfig(sim, {
      stateDir: join(dir, 'state'),
      listenAddress: opts.listenAddress,
      nodePath: process.execPath,
      traffic,
      ...(pySpy !== undefined ? { pySpy } : {}),
    }),
  );
  try {
    loadConfigFile(configPath);
  } catch (err) {
    await stopSims();
    if (err instanceof ConfigError)
      throw new Error(`the embedded demo config is invalid:\n  ${err.problems.join('\n  ')}`, { cause: err });
    throw err;
  }

  const cleanups: (() => void)[] = [];
  let replayTimer: NodeJS.Timeout | undefined;
  // The daemon's log lines (JSON by default) would break up the timeline: they go to a file, named below.
  const logFile = opts.logFile ?? join(dir, 'wedgewatch.log');
  // Written synchronously: nothing is lost when Ctrl-C ends the process, and a late line (a remediation command
  // finishing during shutdown) finds the file still open instead of an ended stream.
  const logFd = openSync(logFile, 'a');
  let logOpen = true;
  const logStream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      if (logOpen) writeSync(logFd, chunk);
      cb();
    },
  });
  const logger = createLogger({ level: opts.logLevel, format: opts.logFormat, destination: logStream });

  const stopAll = async () => {
    clearTimeout(replayTimer);
    for (const c of cleanups) c();
    await stopSims();
  };
  const closeLog = () => {
    logOpen = false;
    closeSync(logFd);
  };
  try {
    await runDaemonUntilSignal(
      { configPath, logger, listenAddress: opts.listenAddress },
      (daemon) => {
        const base = `http://${daemon.address()}`;
        print(
          [
            'wedgewatch demo: the watchdog and two simulated SGLang prefill/decode deployments behind a model gateway (Ctrl-C to stop)',
            `  status page  ${base}/`,
            `  metrics      ${base}/metrics`,
            `  config       ${configPath}`,
            `  daemon log   ${logFile}`,
            `simulator (${DEMO_TARGET}):`,
            describeSim(sim),
            `second deployment (${DEMO_PEER_TARGET}):`,
            describeSim(traffic.peer),
            `model gateway  ${gw.url} (both routers as workers: GET ${gw.url}/workers)`,
            `incident replay in ${Math.round(opts.replayAfterMs / 1000)}s on ${DEMO_TARGET}: an abort cascade with nixl_abort_unhandled armed`,
            'timeline:',
          ].join('\n'),
        );
        cleanups.push(sim.onEvent((ev) => timeline(`sim:${ev.service}`, ev.message)));
        cleanups.push(traffic.peer.onEvent((ev) => timeline(`sim-b:${ev.service}`, ev.message)));
        cleanups.push(
          gatewayTimeline(
            gw,
            { [sim.urls.router]: DEMO_TARGET, [traffic.peer.urls.router]: DEMO_PEER_TARGET },
            timeline,
          ),
        );
        const ctx: DemoContext = { sim, daemon, configPath, timeline };
        // The journal outlives reloads (the next runtime takes it over), so one subscription serves the whole run.
        const journal = daemon.runtime?.watchdog?.journal;
        if (journal) cleanups.push(journalTimeline(journal, timeline));
        for (const ext of opts.extensions ?? []) {
          const cleanup = ext(ctx);
          if (cleanup) cleanups.push(cleanup);
        }
        replayTimer = setTimeout(() => void replayIncident(sim, timeline), opts.replayAfterMs);
      },
      stopAll,
    );
  } catch (err) {
    // The watchdog could not start (its listen address is busy): take the simulator down with it.
    await stopAll();
    throw err;
  } finally {
    closeLog();
  }
}

/** The gateway's own view on the timeline: which deployment left or rejoined its workers, and who serves now. */
function gatewayTimeline(
  gateway: SimGateway,
  names: Record<string, string>,
  timeline: (source: string, message: string) => void,
): () => void {
  const name = (url: string) => names[url] ?? url;
  return gateway.workers.onChange((c) => {
    const serving = c.workers.map((w) => name(w.url)).join(', ') || 'none';
    timeline(
      'gateway',
      `${c.action === 'removed' ? 'removed' : 'added back'} ${name(c.worker.url)} (${c.worker.url}); users now go to: ${serving}`,
    );
  });
}

/** The incident: a build with the unhandled NIXL ABORT, then clients cutting streams off mid-flight. */
async function replayIncident(sim: Sim, timeline: (source: string, message: string) => void): Promise<void> {
  timeline(
    'demo',
    'replaying the incident: arming nixl_abort_unhandled, then an abort cascade of 16 streams',
  );
  // Once the thread is dead the fault has done its job; disarming it keeps the remediated prefill alive
  // (on a real affected build the next abort would kill it again).
  const off = sim.onEvent((ev) => {
    if (ev.kind === 'thread_death') {
      off();
      sim.disableFault('nixl_abort_unhandled');
      timeline('demo', 'bootstrap thread is dead; /health stays 200 everywhere while completions hang');
    }
  });
  sim.enableFault('nixl_abort_unhandled');
  try {
    const r = await abortCascade(sim.urls.router, { requests: 16, cutAfterMs: 3000 });
    timeline(
      'demo',
      `abort cascade done: ${r.cutAfterData} cut mid-stream, ${r.cutWithoutData} cut before any token`,
    );
  } catch (err) {
    timeline('demo', `abort cascade failed: ${(err as Error).message}`);
  }
}

export function demoCommand(): Command {
  return addLogFlags(
    new Command('demo')
      .addHelpText('after', '\nExample:\n  wedgewatch demo --replay-after 10s\n')
      .description(
        "run the simulator and the watchdog watching it; replays a wedge incident after ~30 s. Prints only the timeline: the daemon's own log goes to wedgewatch.log in the demo's directory (named at start)",
      )
      .addOption(
        new Option('--web.listen-address <addr>', 'address for the status page and /metrics').default(
          '127.0.0.1:9787',
        ),
      )
      .option('--replay-after <duration>', 'when to replay the incident', '30s'),
  ).action(async (opts: Record<string, unknown>) => {
    let replayAfterMs: number;
    try {
      replayAfterMs = parseDurationArg(opts.replayAfter as string, '--replay-after');
    } catch (err) {
      process.stderr.write(`wedgewatch demo: ${(err as Error).message}\n`);
      process.exitCode = EXIT.usage;
      return;
    }
    try {
      await runDemo({
        listenAddress: opts['web.listenAddress'] as string,
        replayAfterMs,
        logLevel: opts['log.level'] as LogLevel,
        logFormat: opts['log.format'] as 'json' | 'pretty',
      });
    } catch (err) {
      // A busy port or a simulator that cannot start: one line, no stack trace.
      process.stderr.write(`wedgewatch demo: cannot start: ${(err as Error).message}\n`);
      process.exitCode = EXIT.usage;
    }
  });
}
