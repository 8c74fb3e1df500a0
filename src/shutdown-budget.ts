// How long a shutdown may take. A stop drains: scheduling stops, and probes in flight finish (bounded by their own
// timeouts) instead of being cut, because a cut completion is a client disconnect, and on NIXL builds without the
// ABORT handler that disconnect kills prefill's bootstrap thread (issue 24 finding 3). The unit's TimeoutStopSec
// and the DaemonSet's terminationGracePeriodSeconds are checked against these numbers (test/ops/stop-budget.test.ts).
import type { Config } from './config/schema.js';

/**
 * The longest a shutdown waits for probes in flight: a probe whose timeout is longer is cut at this point, so a
 * 10-minute probe timeout cannot hold a restart (or outlive the supervisor's patience and end in SIGKILL).
 */
export const SHUTDOWN_DRAIN_MAX_MS = 120_000;

/**
 * What the rest of the stop may take after the drain: the remediation grace (2.5 s), the journal and offsets
 * flush, the HTTP server's close. Past drain + this, the process exits anyway (exit 1).
 */
export const SHUTDOWN_AFTER_DRAIN_MS = 4_500;

/** The drain this config needs: its longest probe timeout, capped at SHUTDOWN_DRAIN_MAX_MS. */
export function shutdownDrainMs(config: Pick<Config, 'targets'>): number {
  let longest = 0;
  for (const t of config.targets) for (const p of t.probes) longest = Math.max(longest, p.timeout);
  return Math.min(longest, SHUTDOWN_DRAIN_MAX_MS);
}

/** The whole stop's deadline for this config: drain, then the rest. */
export function shutdownDeadlineMs(config: Pick<Config, 'targets'>): number {
  return shutdownDrainMs(config) + SHUTDOWN_AFTER_DRAIN_MS;
}
