import { Command, Option } from 'commander';
import { ConfigError } from '../config/errors.js';
import { Daemon, type DaemonOptions } from '../daemon.js';
import type { Logger } from '../logger.js';
import { appliedNodeFlags } from '../node-flags.js';
import { routePlugins } from '../server/plugins.js';
import { addLogFlags, EXIT, loggerFrom } from './common.js';

const SHUTDOWN_DEADLINE_MS = 4500;

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
  const shutdown = (sig: NodeJS.Signals) => {
    log.info({ signal: sig }, 'shutting down');
    process.off('SIGHUP', onHup);
    // Backstop: whatever hangs, the process is gone before systemd's or the test's patience runs out.
    setTimeout(() => {
      log.error('shutdown deadline passed; exiting');
      process.exit(EXIT.failed);
    }, SHUTDOWN_DEADLINE_MS).unref();
    void (async () => {
      try {
        await beforeStop?.();
      } catch (err) {
        log.warn({ err: String(err) }, 'shutdown: a pre-stop step failed');
      }
      // Never rejects (Daemon.stop logs each part's failure); a remediation in flight gets SHUTDOWN_GRACE_MS.
      await daemon.stop();
      onStopped?.();
    })();
  };
  const onStop = (sig: NodeJS.Signals) => {
    if (!started) stopSignal ??= sig;
    else shutdown(sig);
  };
  process.on('SIGHUP', onHup);
  process.once('SIGTERM', onStop);
  process.once('SIGINT', onStop);
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
  process.exitCode = EXIT.ok;
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
    });
  });
}
