// The daemon's lifecycle: load, serve, reload (SIGHUP or /-/reload), stop (SIGTERM/SIGINT).
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { ConfigError } from './config/errors.js';
import type { LoadedConfig } from './config/load.js';
import { loadConfigInChild } from './config/load-in-child.js';
import { restartOnlyChanges } from './config/reload-limits.js';
import type { Logger } from './lib/logger.js';
import { createMetrics, type Metrics } from './metrics.js';
import { redactor } from './lib/redact.js';
import { createRuntime, type Runtime, type RuntimeFactory } from './runtime.js';
import { connectionGuards, createServer, type ReloadOutcome } from './outputs/server/app.js';
import { shutdownDrainMs } from './shutdown-budget.js';
import { parseListenAddress } from './outputs/server/listen.js';
import type { WebSecurity } from './outputs/server/web-security.js';
import { AgentServer } from './outputs/traffic/agent.js';

const STOPPING: ReloadOutcome = { ok: false, errors: ['the daemon is stopping'] };
const RELOAD_WAIT_ON_STOP_MS = 10_000;
/** Past the drain, before cutting: a probe timing out at exactly its timeout settles first. */
const DRAIN_SLACK_MS = 500;

export interface DaemonOptions {
  configPath: string;
  logger: Logger;
  /** Overrides web.listenAddress from the config when given (the --web.listen-address flag). */
  listenAddress?: string;
  /** --web.enable-lifecycle: the lifecycle API is on whatever web.enableLifecycle says (as Prometheus's flag). */
  enableLifecycle?: boolean;
  metrics?: Metrics;
  runtimeFactory?: RuntimeFactory;
  /** Route plugins that need the daemon (status page, /probe, /api/*). */
  plugins?: ((daemon: Daemon) => FastifyPluginAsync)[];
  /** Environment for ${VAR} expansion (tests pass their own). */
  env?: NodeJS.ProcessEnv;
  /** --web.config.file: TLS and basic auth (exporter-toolkit format); re-read when it changes. */
  webConfigFile?: string;
  /** --web.external-url: overrides web.externalURL (the origin browsers use; write guard, src/outputs/server/origin-policy.ts). */
  externalUrl?: string;
  /** How often the web config, certificate and key are checked for changes (tests shorten it). */
  webConfigPollMs?: number;
}

export class Daemon {
  readonly metrics: Metrics;
  readonly logger: Logger;
  loaded!: LoadedConfig;
  runtime?: Runtime;
  private server?: FastifyInstance;
  /** HAProxy's agent-check port (config `agent:`); its address is restart-only (reload-limits.ts). */
  agent?: AgentServer;
  private ready = false;
  private reloading: Promise<ReloadOutcome> | undefined;
  /** Runtimes replaced by a reload whose in-flight probes are still finishing. */
  private readonly draining = new Set<Runtime>();
  /** Set by stop(): a reload still in flight must not install or activate a runtime after shutdown. */
  private stopped = false;
  web?: WebSecurity;

  constructor(private readonly opts: DaemonOptions) {
    this.metrics = opts.metrics ?? createMetrics();
    this.logger = opts.logger;
  }

  private readonly loadFallback = (why: string) =>
    this.logger.warn({ reason: why }, 'config loaded in the daemon: no loader process could be started');

  private async load(): Promise<LoadedConfig> {
    const loaded = await loadConfigInChild(this.opts.configPath, this.opts.env ?? process.env, {
      onFallback: this.loadFallback,
    });
    redactor.set(loaded.secrets);
    return loaded;
  }

  /** Loads the config (throws ConfigError on a bad one), starts the runtime and the HTTP server. */
  async start(): Promise<void> {
    this.loaded = await this.load();
    // Before anything runs: a bad web config stops the start with nothing started. Imported only when given: its
    // schema loads zod, which the daemon's isolate otherwise never does (docs/decisions.md).
    if (this.opts.webConfigFile !== undefined) {
      const { WebSecurity } = await import('./outputs/server/web-security.js');
      this.web = await WebSecurity.load(this.opts.webConfigFile, this.logger);
    }
    const factory = this.opts.runtimeFactory ?? createRuntime;
    this.runtime = await factory(this.loaded, { metrics: this.metrics, logger: this.logger });
    this.markReload(true);
    this.server = await createServer({
      metrics: this.metrics,
      logger: this.logger,
      isReady: () => this.ready,
      unhealthy: () => this.unhealthy(),
      lifecycleEnabled: () => this.lifecycleEnabled(),
      reload: () => this.reload(),
      maxConnections: this.loaded.config.web.maxConnections,
      plugins: (this.opts.plugins ?? []).map((p) => p(this)),
      web: this.web && { https: this.web.https(), onRequest: this.web.onRequest() },
      externalUrl: () => this.opts.externalUrl ?? this.loaded.config.web.externalURL,
    });
    const { host, port } = parseListenAddress(
      this.opts.listenAddress ?? this.loaded.config.web.listenAddress,
    );
    await this.server.listen({ host, port });
    if (this.loaded.config.agent !== undefined) {
      this.agent = new AgentServer({
        config: this.loaded.config.agent,
        listen: parseListenAddress(this.loaded.config.agent.listenAddress),
        view: () => this.runtime?.traffic?.view,
        metrics: this.metrics,
        logger: this.logger,
      });
      await this.agent.start();
    }
    await this.web?.watch(this.server.server, this.opts.webConfigPollMs);
    this.ready = true;
    this.logger.info({ address: this.address() }, 'wedgewatch listening');
  }

  /**
   * A reason when some target's probe scheduler has not planned a round for 3 of its intervals (the daemon
   * answers HTTP but watches nothing), else undefined. Measured on the monotonic clock: on the wall clock a forward
   * step read as a stalled scheduler and failed the liveness probe. `afterMs`: pretend that much more has passed.
   */
  unhealthy(afterMs = 0): string | undefined {
    for (const [target, s] of this.runtime?.probes ?? []) {
      const since = s.sinceLastTickMs();
      if (since === undefined) continue;
      const late = since + afterMs;
      if (late > 3 * s.tickIntervalMs) {
        return `the probe scheduler of target ${target} has not ticked for ${Math.round(late / 1000)} s (3 intervals are ${Math.round((3 * s.tickIntervalMs) / 1000)} s)`;
      }
    }
    return undefined;
  }

  /** POST /-/reload and the remediation write endpoints: on by the flag or by web.enableLifecycle. */
  lifecycleEnabled(): boolean {
    return this.opts.enableLifecycle === true || this.loaded.config.web.enableLifecycle;
  }

  address(): string {
    const a = this.server?.server.address();
    if (a === null || a === undefined || typeof a === 'string') return String(a);
    return a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
  }

  private markReload(ok: boolean): void {
    this.metrics.configReloadSuccessful.set(ok ? 1 : 0);
    if (ok) this.metrics.configReloadSuccessTimestamp.set(Date.now() / 1000);
  }

  /** Reloads the config; an invalid new one keeps the running one. Concurrent calls share one reload. */
  reload(): Promise<ReloadOutcome> {
    this.reloading ??= this.doReload().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  private async doReload(): Promise<ReloadOutcome> {
    const log = this.logger.child({ component: 'reload' });
    let next: LoadedConfig;
    try {
      next = await loadConfigInChild(this.opts.configPath, this.opts.env ?? process.env, {
        onFallback: this.loadFallback,
      });
    } catch (err) {
      const errors = err instanceof ConfigError ? err.problems : [String(err)];
      log.error({ errors }, 'reload failed; keeping the running configuration');
      this.markReload(false);
      return { ok: false, errors };
    }
    const restartOnly = restartOnlyChanges(this.loaded.config, next.config, {
      listenFlag: this.opts.listenAddress !== undefined,
    });
    if (restartOnly.length > 0) {
      log.error({ errors: restartOnly }, 'reload refused; keeping the running configuration');
      this.markReload(false);
      return { ok: false, errors: restartOnly };
    }
    if (this.stopped) return STOPPING;
    const factory = this.opts.runtimeFactory ?? createRuntime;
    const previousSecrets = this.loaded.secrets;
    // Both sets before the factory runs: its errors and logs may quote the new secrets, and whatever the old
    // runtime still has in flight may quote the old ones.
    redactor.set([...previousSecrets, ...next.secrets]);
    let runtime: Runtime;
    try {
      runtime = await factory(next, { metrics: this.metrics, logger: this.logger, previous: this.runtime });
    } catch (err) {
      log.error({ err }, 'reload failed to start the new configuration; keeping the running one');
      // Redacted while the new secrets are still registered: the text goes out in the /-/reload answer.
      const errors = [redactor.redact(String(err))];
      redactor.set(previousSecrets);
      this.markReload(false);
      return { ok: false, errors };
    }
    if (this.stopped) {
      // Its first round may be in flight already: a draining stop lets it finish too.
      await runtime.stop({ finishProbes: !this.cut });
      return STOPPING;
    }
    const old = this.runtime;
    this.loaded = next;
    this.runtime = runtime;
    // The old runtime's in-flight probes finish on their own: cutting them would be a client disconnect.
    await old?.stop({ drainProbes: true });
    if (old?.drained) {
      this.draining.add(old);
      void old.drained.finally(() => this.draining.delete(old));
    }
    // stop() stops this.runtime (now the new one) itself; activating it after that would restart it.
    if (this.stopped) return STOPPING;
    try {
      await runtime.activate?.();
    } catch (err) {
      // The new config is already in charge; what failed to start is reported, not silently dropped.
      log.error({ err }, 'reload: some log sources failed to start');
    }
    redactor.set(next.secrets);
    // Applied in place: only new connections are counted against it.
    const guard = this.server && connectionGuards.get(this.server);
    if (guard) guard.max = next.config.web.maxConnections;
    if (next.config.agent !== undefined) this.agent?.setConfig(next.config.agent);
    this.markReload(true);
    log.info({ targets: next.config.targets.map((t) => t.name) }, 'configuration reloaded');
    return { ok: true, errors: [] };
  }

  /**
   * Stops everything; never rejects: each part's failure is logged, so a signal handler's shutdown cannot end in an
   * unhandled rejection. `drain` (what a stop signal does): scheduling stops at once and probes in flight finish,
   * bounded by their own timeouts and at most shutdownDrainMs(config), instead of being cut: a cut completion is a
   * client disconnect, which on NIXL builds without the ABORT handler kills prefill's bootstrap thread. Without
   * `drain` they are cut. A second call joins the first; one without `drain` while a drain runs cuts what is left
   * (a second SIGTERM/SIGINT). `remediationGraceMs`: how long a remediation command in flight is waited for before
   * its process group is cut.
   */
  stop(opts: { remediationGraceMs?: number; drain?: boolean } = {}): Promise<void> {
    if (this.stopping !== undefined && opts.drain !== true) this.cutProbes();
    this.stopping ??= this.doStop(opts);
    return this.stopping;
  }

  private stopping: Promise<void> | undefined;
  /** Set once a stop cuts in-flight probes (asked to, or the drain's deadline passed). */
  private cut = false;

  private cutProbes(): void {
    if (this.cut) return;
    this.cut = true;
    const logged = (err: unknown) =>
      this.logger.warn({ err: String(err) }, 'cutting in-flight probes failed');
    for (const r of this.draining) void r.stop().catch(logged);
    void this.runtime?.cutProbes?.().catch(logged);
  }

  private async doStop(opts: { remediationGraceMs?: number; drain?: boolean }): Promise<void> {
    this.stopped = true;
    const drain = opts.drain === true;
    if (!drain) this.cut = true;
    const log = this.logger.child({ component: 'shutdown' });
    const logged =
      (what: string) =>
      (err: unknown): void =>
        log.warn({ err: String(err) }, `${what} failed to stop cleanly`);
    let drainTimer: NodeJS.Timeout | undefined;
    if (drain) {
      // Each probe ends by its own timeout; this only bounds the ones whose timeout is past the cap.
      const drainMs = this.loaded === undefined ? 0 : shutdownDrainMs(this.loaded.config);
      drainTimer = setTimeout(() => {
        if (this.cut) return;
        log.warn({ drainMs }, 'shutdown: probes still in flight after the drain; cutting them');
        this.cutProbes();
      }, drainMs + DRAIN_SLACK_MS);
      drainTimer.unref();
      const inFlight = [...(this.runtime?.probes?.values() ?? [])].reduce(
        (n, s) => n + s.inflight().length,
        0,
      );
      if (inFlight > 0) log.info({ inFlight, drainMs }, 'shutdown: letting probes in flight finish');
    }
    this.ready = false;
    this.web?.stop();
    const inFlight = this.reloading;
    if (inFlight !== undefined) {
      // Bounded: a wedged runtime factory must not hold the shutdown; the stopped flag covers what it does later.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        inFlight.catch(() => undefined),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, RELOAD_WAIT_ON_STOP_MS);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
    }
    // Together, and before the HTTP server's close (which waits for its requests): the running runtime stops
    // scheduling now, whatever a reload-replaced one still has in flight. Those finish too on a draining stop;
    // otherwise they are cut now.
    const stops = Promise.all([
      ...[...this.draining].map((r) =>
        (drain && !this.cut ? r.drained : r.stop(opts))?.catch(logged('a runtime replaced by a reload')),
      ),
      this.runtime
        ?.stop({ remediationGraceMs: opts.remediationGraceMs, finishProbes: drain && !this.cut })
        .catch(logged('the runtime')),
    ]);
    await this.server?.close().catch(logged('the HTTP server'));
    await this.agent?.stop().catch(logged('the agent-check port'));
    await stops;
    clearTimeout(drainTimer);
  }
}
