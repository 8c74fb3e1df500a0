// A target's remediation as the runtime builds it: the Remediator for its `remediate:` block, whose runs go to the
// events journal. The watchdog only hands it each new state (TargetWatchdogOptions.remediation), the way it tells
// incident capture of each verdict; it never builds one itself.
import type { TargetConfig } from '../../config/schema.js';
import type { Journal } from '../journal/journal.js';
import type { Logger } from '../../lib/logger.js';
import type { TargetMetrics } from '../../metrics.js';
import type { RemediationHistory } from './history.js';
import { Remediator, type RemediationRecord, type RemediatorCarry } from './remediator.js';

export interface TargetRemediationDeps {
  metrics: Pick<TargetMetrics, 'remediations' | 'remediationPaused'>;
  logger: Logger;
  journal: Journal;
  now?: () => number;
  /** The remediation of the runtime a reload replaces (TargetWatchdog.carry().remediation). */
  previous?: RemediatorCarry;
  history?: RemediationHistory;
}

/** The target's remediator, or undefined when it has no `remediate:` block. */
export function remediationFor(target: TargetConfig, deps: TargetRemediationDeps): Remediator | undefined {
  if (!target.remediate) return undefined;
  const now = deps.now ?? Date.now;
  return new Remediator({
    target: target.name,
    config: target.remediate,
    metrics: deps.metrics,
    logger: deps.logger,
    onRecord: (r) => deps.journal.append(remediationEvent(target.name, r, now())),
    now,
    previous: deps.previous,
    history: deps.history,
  });
}

/** The journal's `remediation` event for one run (or skip) of the command. */
export function remediationEvent(target: string, r: RemediationRecord, time: number) {
  const what = r.result === 'dry_run' ? 'would run (dry run)' : r.result;
  const argv = r.argv.join(' ');
  const shown = argv.length > 120 ? `${argv.slice(0, 60)} … ${argv.slice(-50)}` : argv;
  return {
    time,
    target,
    type: 'remediation' as const,
    summary: `remediation ${r.action} ${what}: ${shown} (${r.diagnosis})`,
    data: {
      action: r.action,
      argv: r.argv,
      result: r.result,
      diagnosis: r.diagnosis,
      durationMs: r.durationMs,
      code: r.code,
      output: r.output,
    },
  };
}
