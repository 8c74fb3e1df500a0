// What the daemon runs for one loaded configuration: the sources and the detector. A reload builds a new
// runtime from the new config and only then stops the old one, so a bad config never leaves nothing running.
// Per target: probes, log watcher, engine scrapes and file watches feed one TargetWatchdog (src/core/).
import { RemediationHistory } from './outputs/remediate/history.js';
import { BaselineStore } from './outputs/baselines/store.js';
import { remediationFor } from './outputs/remediate/target.js';
import { dirname } from 'node:path';
import { FileWatch } from './sources/changes/watch.js';
import { createKnownSeries } from './outputs/metrics/known-series.js';
import type { LoadedConfig } from './config/load.js';
import { forgetRemovedSeries } from './outputs/metrics/forget-series.js';
import { Journal } from './outputs/journal/journal.js';
import { TargetWatchdog, Watchdog } from './watchdog.js';
import { EngineScraper } from './sources/engines/scrape.js';
import { LogWindows } from './outputs/incidents/log-window.js';
import { TargetIncidents } from './outputs/incidents/target.js';
import type { Logger } from './lib/logger.js';
import { LogWatcher } from './sources/logs/watcher.js';
import type { Metrics } from './metrics.js';
import { ProbeHistory } from './sources/probes/history.js';
import { ProbeScheduler, slotSpecs } from './sources/probes/schedule.js';
import { slotKey } from './core/memory.js';
import { Redactor, redactor } from './lib/redact.js';
import { NodeWatch } from './sources/node/watch.js';
import { runCommand } from './lib/exec.js';
import type { StackDumper } from './outputs/incidents/stacks.js';
import type { NodeSignal } from './core/signals.js';
import { createTraffic, type Traffic } from './outputs/traffic/target-traffic.js';
import { DrainStore } from './outputs/traffic/drain-store.js';

export interface StopOptions {
  /**
   * A reload: in-flight probes are left to finish in the background (`drained` settles when they have) and a
   * remediation in flight is handed to the next runtime.
   */
  drainProbes?: boolean;
  /**
   * A shutdown that drains: stop() waits for in-flight probes to finish (bounded by their timeouts) instead of
   * cutting them; cutProbes() cuts what is left (a second signal, or the drain's deadline).
   */
  finishProbes?: boolean;
  /** Shutdown: how long a remediation command in flight is waited for before its process group is cut. */
  remediationGraceMs?: number;
}

export interface Runtime {
  /**
   * Present on a runtime built to replace another (ctx.previous): starts what must not overlap with it. Log
   * followers share the offset files, so the new ones start only after the old ones stopped and saved, and resume
   * exactly there: nothing read twice, nothing lost. Call it after stopping the previous runtime.
   */
  activate?(): Promise<void>;
  /**
   * Stops every timer, watcher and socket the runtime owns. With drainProbes it returns once everything but the
   * in-flight probes has stopped; `drained` then settles when those have finished (call stop() again to cut them).
   */
  stop(opts?: StopOptions): Promise<void>;
  drained?: Promise<void>;
  /** Aborts the probes still in flight (a stop that drains then returns soon after). */
  cutProbes?(): Promise<void>;
  /** Probe schedulers by target name (route plugins reach them via daemon.runtime). */
  probes?: Map<string, ProbeScheduler>;
  /** Per-target state, the journal, remediation pause/resume (status page, /api/*). */
  watchdog?: Watchdog;
  /** Incident capture per target (src/outputs/incidents/). */
  incidents?: Map<string, TargetIncidents>;
  /** The status page's sparklines; outlives reloads like the journal. */
  probeHistory?: ProbeHistory;
  /** What the node tells us, per target with a `node:` block (src/sources/node/). */
  node?: Map<string, NodeWatch>;
  /** Readiness per backend, the pool rule and gateway drains (GET /ready, the agent port, the status page). */
  traffic?: Traffic;
}

export interface RuntimeContext {
  metrics: Metrics;
  logger: Logger;
  /** The runtime being replaced on reload, so state (log offsets, target states) can carry over. */
  previous?: Runtime;
}

export type RuntimeFactory = (loaded: LoadedConfig, ctx: RuntimeContext) => Promise<Runtime>;

interface Source {
  start(): void | Promise<void>;
  stop(): Promise<void>;
}

export const createRuntime: RuntimeFactory = async (loaded, ctx) => {
  const log = ctx.logger.child({ component: 'runtime' });
  const { config } = loaded;
  // The journal outlives reloads: one writer for events.jsonl, one history for /api/events.
  const journal =
    ctx.previous?.watchdog?.journal ??
    new Journal({
      dir: config.stateDir,
      logger: ctx.logger,
      onWriteError: () => ctx.metrics.stateSaveErrors.inc({ store: 'events_journal' }),
    });
  const watchdog = new Watchdog(journal);
  const probeHistory = ctx.previous?.probeHistory ?? new ProbeHistory();
  const history = new RemediationHistory(config.stateDir);
  const baselines = new BaselineStore(config.stateDir);
  const probes = new Map<string, ProbeScheduler>();
  const traffic = createTraffic(config, {
    metrics: ctx.metrics,
    logger: ctx.logger,
    journal,
    store:
      ctx.previous?.traffic !== undefined
        ? ctx.previous.traffic.store
        : new DrainStore(config.stateDir, ctx.logger),
    previous: ctx.previous?.traffic,
  });
  const sources: Source[] = [];
  const logWatchers: LogWatcher[] = [];
  let stopped = false;

  const incidents = new Map<string, TargetIncidents>();
  const node = new Map<string, NodeWatch>();
  // This config's secrets, whatever the process-wide redactor holds at the moment (a reload swaps it).
  const ownSecrets = new Redactor();
  ownSecrets.set(loaded.secrets);
  const redact = (text: string) => ownSecrets.redact(redactor.redact(text));

  for (const target of config.targets) {
    const before = ctx.previous?.watchdog?.targets.get(target.name);
    const windows = new LogWindows();
    // The node's readings (issue 42); made once the watchdog exists, which the stack dumps report back to.
    let nodeWatch: NodeWatch | undefined;
    let nodeSink: ((s: NodeSignal) => void) | undefined;
    const stacks: StackDumper | undefined = target.node?.stacks.enabled
      ? {
          dump: (ms) => nodeWatch?.stacks(ms) ?? Promise.resolve([]),
          report: (service, summaries) =>
            nodeSink?.({
              kind: 'node',
              target: target.name,
              service,
              source: 'stacks',
              time: Date.now(),
              stacks: summaries,
            }),
        }
      : undefined;
    const targetIncidents = new TargetIncidents({
      deps: {
        target,
        config: config.incidents,
        stateDir: config.stateDir,
        windows,
        journal,
        status: () => ({ time: Date.now(), targets: watchdog.status() }),
        // The scheduler is made below; captures run later, once it exists.
        probes: {
          recent: () => probes.get(target.name)?.recent() ?? { results: [], failures: [] },
          inflight: () => probes.get(target.name)?.inflight() ?? [],
        },
        redact,
        ...(stacks !== undefined ? { stacks } : {}),
      },
      metrics: ctx.metrics,
      logger: ctx.logger,
      journal,
      previous: ctx.previous?.incidents?.get(target.name)?.carry(),
    });
    incidents.set(target.name, targetIncidents);
    const previous = before?.carry();
    const wd = new TargetWatchdog({
      target,
      history,
      baselines,
      metrics: ctx.metrics,
      logger: ctx.logger,
      journal,
      incidents: targetIncidents,
      remediation: remediationFor(target, {
        metrics: ctx.metrics,
        logger: ctx.logger,
        journal,
        previous: previous?.remediation,
        history,
      }),
      previous,
      slots: new Set(slotSpecs(target).map((x) => slotKey(x.probe.name, x.endpoint, x.conn))),
      traffic: { onStep: (m) => traffic.view.update(m), status: () => traffic.status(target.name) },
    });
    watchdog.add(wd);
    const scheduler = new ProbeScheduler({
      target,
      headers: loaded.headers.get(target.name) ?? new Map(),
      metrics: ctx.metrics,
      logger: ctx.logger,
      baseDir: dirname(loaded.path),
      // A draining scheduler's last results belong to the old runtime: they must not move the old state.
      onResult: (r) => {
        if (stopped) return;
        probeHistory.record(r);
        wd.handle(r);
      },
    });
    wd.setConfirmer(scheduler);
    probes.set(target.name, scheduler);
    sources.push(scheduler);
    for (const engine of target.engines) {
      EngineScraper.createFailureSeries(ctx.metrics, target.name, engine.service);
      sources.push(
        new EngineScraper({
          target: target.name,
          engine,
          metrics: ctx.metrics,
          logger: ctx.logger,
          onEngine: (e) => wd.handle(e),
        }),
      );
    }
    if (target.logs.length > 0) {
      logWatchers.push(
        new LogWatcher({
          target: target.name,
          sources: target.logs,
          userRules: config.rules,
          stateDir: config.stateDir,
          metrics: ctx.metrics,
          logger: ctx.logger,
          onEvent: (e) => {
            windows.noteMatch(e);
            wd.handle(e);
          },
          onEngine: (e) => wd.handle(e),
          onMember: (e) => windows.noteMember(e),
          journaled: () =>
            journal
              .query({ target: target.name, type: 'critical_log', limit: Number.POSITIVE_INFINITY })
              .flatMap((e) => (e.type === 'critical_log' && e.data.ref !== undefined ? [e.data.ref] : [])),
          durable: () => journal.flush(),
          onRead: (service, file, offset, time) => windows.noteRead(service, file, offset, time),
        }),
      );
    }
    if (target.node !== undefined) {
      nodeSink = (sig) => {
        if (!stopped) wd.handle(sig);
      };
      nodeWatch = new NodeWatch({
        target: target.name,
        node: target.node,
        exec: runCommand,
        metrics: ctx.metrics,
        logger: ctx.logger,
        onSignal: nodeSink,
      });
      sources.push(nodeWatch);
      node.set(target.name, nodeWatch);
    }
    if (target.watch.length > 0) {
      sources.push(
        new FileWatch({
          target: target.name,
          paths: target.watch,
          metrics: ctx.metrics,
          logger: ctx.logger,
          onChange: (c) => wd.handle(c),
        }),
      );
    }
  }

  const started: Source[] = [];
  const activate = async () => {
    for (const w of logWatchers) {
      await w.start();
      started.push(w);
    }
    // Only once the old runtime has stopped, so nothing of it can set the removed series again.
    if (ctx.previous !== undefined) {
      const kept = new Map(
        config.targets.map((t) => [
          t.name,
          new Set([...t.engines.map((e) => e.service), ...t.logs.map((l) => l.service)]),
        ]),
      );
      const probeSlots = new Set(
        [...probes].flatMap(([target, s]) =>
          s.slotList().map((slot) => `${target}|${slot.probe}|${slot.endpoint}|${slot.conn}|${slot.kind}`),
        ),
      );
      await forgetRemovedSeries(ctx.metrics, { targets: kept, probeSlots });
    }
  };
  const runtime: Runtime = { probes, watchdog, incidents, probeHistory, node, traffic, stop: async () => {} };
  // Sources other than the probes stop once, however often stop() is called (a reload's drain, then shutdown): a
  // second close of an undici Agent rejects with ClientDestroyedError, and that must never reach the top.
  let sourcesStopped: Promise<void> | undefined;
  const stopSources = (): Promise<void> =>
    (sourcesStopped ??= Promise.allSettled(
      started.filter((s) => !(s instanceof ProbeScheduler)).map((s) => s.stop()),
    ).then((results) => {
      for (const r of results)
        if (r.status === 'rejected') log.warn({ err: String(r.reason) }, 'a source failed to stop cleanly');
    }));
  const stopAll = async (opts: StopOptions = {}) => {
    stopped = true;
    const schedulers = started.filter((s): s is ProbeScheduler => s instanceof ProbeScheduler);
    const drain = opts.drainProbes === true || opts.finishProbes === true;
    const probesDone = Promise.allSettled(schedulers.map((s) => s.stop({ drain }))).then(() => {});
    await stopSources();
    await traffic.stop();
    // A reload hands a remediation in flight to the next runtime; a shutdown waits for it, then cuts it.
    await watchdog
      .stop({ handover: opts.drainProbes, remediationGraceMs: opts.remediationGraceMs })
      .catch((err: unknown) => log.warn({ err: String(err) }, 'the detector failed to stop cleanly'));
    // A capture in flight ends by its own deadline; a reload hands it to the next runtime instead.
    if (!opts.drainProbes) {
      await Promise.allSettled([...incidents.values()].map((i) => i.idle()));
      // A capture that ended just now journaled its `incident` event after the detector's flush.
      await journal.flush().catch((err: unknown) => log.warn({ err: String(err) }, 'journal flush failed'));
    }
    if (opts.drainProbes) runtime.drained = probesDone;
    else await probesDone;
  };
  try {
    for (const s of sources) {
      await s.start();
      started.push(s);
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  watchdog.start();
  const slots = new Set(
    [...probes].flatMap(([t, s]) => s.slotList().map((x) => `${t}|${x.probe}|${x.endpoint}|${x.conn}`)),
  );
  probeHistory.retain((t, probe, endpoint, conn) => slots.has(`${t}|${probe}|${endpoint}|${conn}`));
  createKnownSeries(
    ctx.metrics,
    config,
    new Map([...probes].map(([name, s]) => [name, s.slotList()])),
    Date.now(),
  );
  log.info({ targets: config.targets.map((t) => t.name) }, 'configuration active');
  // A first runtime starts whole; one that replaces another leaves its followers to the caller's activate().
  if (ctx.previous === undefined) await activate();
  runtime.stop = stopAll;
  // A second stop() without drain aborts what a draining scheduler still runs (ProbeScheduler.stop).
  runtime.cutProbes = async () => {
    await Promise.allSettled(
      started.filter((s): s is ProbeScheduler => s instanceof ProbeScheduler).map((s) => s.stop()),
    );
  };
  runtime.activate = ctx.previous === undefined ? undefined : activate;
  return runtime;
};
