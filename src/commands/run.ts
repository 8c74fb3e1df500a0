import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError } from '../config/errors.js';
import { Daemon, type DaemonOptions } from '../daemon.js';
import type { Logger } from '../lib/logger.js';
import { appliedNodeFlags } from '../node-flags.js';
import { routePlugins } from '../outputs/server/plugins.js';
import { SHUTDOWN_AFTER_DRAIN_MS, shutdownDeadlineMs } from '../shutdown-budget.js';
import { addLogFlags, EXIT, loggerFrom } from './common.js';

/** Runs a daemon until SIGTERM/SIGINT; SIGHUP reloads. Shared by `run` and `demo`. */
export async function runDaemonUntilSignal(
  opts: DaemonOptions,
  onStarted?: (daemon: Daemon) => void,
  beforeStop?: () => Promise<void>,
): Promise<void> {
  const log: Logger = opts.logger;
  const v8 = appliedNodeFlags();
  if (v8.set.length + v8.given.length > 0) log.info({ set: v8.set, given: v8.given }, 'shipped V8 flags');
  const daemon = new Daemon({ plugins: routePlugins, ...opts });
  // Signal handlers go in before the daemon starts: a SIGHUP's default action is to end the process, and one that
  // arrives while the config loads is a reload to do once started. A stop signal during start stops right after.
  let started = false;
  let reloadPending = false;
  let stopSignal: NodeJS.Signals | undefined;
  let onStopped: (() => void) | undefined;
  const onHup = () => {
    if (!started) {
      reloadPending = true;
      return;
    }
    log.info('SIGHUP: reloading configuration');
    void daemon.reload();
  };
  let stopping = false;
  const backstop = (ms: number) =>
    // Whatever hangs, the process is gone before systemd's or the test's patience runs out.
    setTimeout(() => {
      log.error('shutdown deadline passed; exiting');
      process.exit(EXIT.failed);
    }, ms).unref();
  const shutdown = (sig: NodeJS.Signals) => {
    if (stopping) {
      // A second stop signal is the operator insisting: cut what is in flight (each cut may be an engine abort).
      log.warn({ signal: sig }, 'second stop signal: cutting probes in flight');
      backstop(SHUTDOWN_AFTER_DRAIN_MS);
      void daemon.stop();
      return;
    }
    stopping = true;
    // The drain: probes in flight finish (bounded by their timeouts), so the stop itself aborts nothing on the
    // engines; the unit's TimeoutStopSec and the DaemonSet's grace period cover this deadline (docs/deploy.md).
    const deadlineMs = shutdownDeadlineMs(daemon.loaded.config);
    log.info({ signal: sig, deadlineMs }, 'shutting down');
    process.off('SIGHUP', onHup);
    backstop(deadlineMs);
    void (async () => {
      try {
        await beforeStop?.();
      } catch (err) {
        log.warn({ err: String(err) }, 'shutdown: a pre-stop step failed');
      }
      // Never rejects (Daemon.stop logs each part's failure); a remediation in flight gets SHUTDOWN_GRACE_MS.
      await daemon.stop({ drain: true });
      onStopped?.();
    })();
  };
  const onStop = (sig: NodeJS.Signals) => {
    if (!started) stopSignal ??= sig;
    else shutdown(sig);
  };
  process.on('SIGHUP', onHup);
  // `on`, not `once`: a second signal must reach shutdown() (which cuts), not the default action (instant death,
  // with offsets and the journal unsaved).
  process.on('SIGTERM', onStop);
  process.on('SIGINT', onStop);
  const unhook = () => {
    process.off('SIGHUP', onHup);
    process.off('SIGTERM', onStop);
    process.off('SIGINT', onStop);
  };
  try {
    await daemon.start();
  } catch (err) {
    unhook();
    // Whatever failed, what did start (probes, followers) must not keep the process alive.
    await daemon.stop().catch(() => {});
    if (err instanceof ConfigError) {
      for (const p of err.problems) log.error({ problem: p }, 'invalid configuration');
      process.stderr.write(`${err.message}\n`);
      process.exitCode = EXIT.usage;
      return;
    }
    const code = (err as NodeJS.ErrnoException).code;
    log.error({ err }, 'failed to start');
    process.stderr.write(`wedgewatch: failed to start: ${(err as Error).message}\n`);
    process.exitCode = code === 'EADDRINUSE' || code === 'EACCES' ? EXIT.usage : EXIT.failed;
    return;
  }
  started = true;
  onStarted?.(daemon);
  await new Promise<void>((resolveStop) => {
    onStopped = resolveStop;
    if (stopSignal !== undefined) shutdown(stopSignal);
    else if (reloadPending) onHup();
  });
  unhook();
  process.exitCode = EXIT.ok;
}

function externalUrlArg(v: string): string {
  let u: URL | undefined;
  try {
    u = new URL(v);
  } catch {
    u = undefined;
  }
  if (u === undefined || (u.protocol !== 'http:' && u.protocol !== 'https:'))
    throw new InvalidArgumentError('expected an absolute http:// or https:// URL');
  return v;
}

export function runCommand(): Command {
  return addLogFlags(
    new Command('run')
      .addHelpText(
        'after',
        '\nExample:\n  wedgewatch run --config /etc/wedgewatch/wedgewatch.yaml --web.listen-address 127.0.0.1:9787\n',
      )
      .description('run the watchdog daemon')
      .requiredOption('-c, --config <file>', 'config file (YAML)')
      .addOption(
        new Option('--web.listen-address <addr>', 'address for /metrics and the web UI').default(':9787'),
      )
      .option(
        '--web.enable-lifecycle',
        'enable POST /-/reload and the remediation pause/resume endpoints (as web.enableLifecycle: true)',
      )
      .option(
        '--web.config.file <file>',
        'web config: TLS certificate/key and basic auth users (exporter-toolkit format)',
      )
      .addOption(
        new Option(
          '--web.external-url <url>',
          'the URL browsers reach wedgewatch by (a reverse proxy, a DNS name): its origin may call write endpoints and /probe (as web.externalURL)',
        ).argParser(externalUrlArg),
      ),
  ).action(async (opts: Record<string, unknown>, cmd: Command) => {
    const explicit = cmd.getOptionValueSource('web.listenAddress') === 'cli';
    await runDaemonUntilSignal({
      configPath: opts.config as string,
      logger: loggerFrom(opts),
      // The flag wins when given; otherwise the config's web.listenAddress (whose default is also :9787).
      listenAddress: explicit ? (opts['web.listenAddress'] as string) : undefined,
      webConfigFile: opts['web.config.file'] as string | undefined,
      enableLifecycle: opts['web.enableLifecycle'] === true,
      externalUrl: opts['web.externalUrl'] as string | undefined,
    });
  });
}
