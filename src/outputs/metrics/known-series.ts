// Every label set a counter can take under the loaded config, created at 0 on start and on reload. A labelled
// counter born at its first value (1) has no earlier sample, so increase()/rate() over it read 0 and the
// first thread death, abort or failed remediation would move no dashboard and no alert.
import type { Config } from '../../config/schema.js';
import type { ReadErrorReason } from '../../sources/logs/tail/types.js';
import type { JournalErrorReason } from '../../sources/logs/journald.js';
import type { StateRecovery } from '../../lib/state-store.js';
import { compileRuleSet, ruleClasses } from '../../sources/logs/rules/compile.js';
import { probeResultNames, type Vocabulary, VOCABULARY } from '../../core/vocabulary.js';
import { hasSeries, type Metrics } from '../../metrics.js';
import type { ConnKind, ProbeKind, ProbeResultClass } from '../../core/signals.js';
import { remediationAction } from '../remediate/action.js';
import type { RemediationRecord } from '../remediate/remediator.js';

/** Probe result classes: every one the vocabulary has (src/core/vocabulary.ts), wrong_output included. */
export const PROBE_RESULTS = probeResultNames() as readonly ProbeResultClass[];

/** The `probes_total` label sets of one slot, one per result class of `vocabulary`, to create at 0. */
export function probeSeries(
  slot: Omit<ProbeSlot, 'kind'> & { kind: string },
  target: string,
  vocabulary: Vocabulary = VOCABULARY,
) {
  const labels = { target, probe: slot.probe, endpoint: slot.endpoint, conn: slot.conn, kind: slot.kind };
  return probeResultNames(vocabulary).map((result) => ({ ...labels, result }));
}

export const REMEDIATION_RESULTS = [
  'success',
  'failure',
  'timeout',
  'interrupted',
  'dry_run',
  'cooldown',
  'capped',
  'paused',
] as const satisfies readonly RemediationRecord['result'][];

export const LOG_READ_ERROR_REASONS = [
  'missing',
  'permission',
  'unreadable',
  'io',
  'malformed',
  'binary',
  'line_too_long',
] as const satisfies readonly (ReadErrorReason | JournalErrorReason | 'binary' | 'line_too_long')[];

export const LOG_ROTATION_KINDS = ['rename', 'truncate', 'recreate'] as const;

/** The `recovery` label of wedgewatch_state_load_errors_total (src/lib/state-store.ts). */
export const STATE_RECOVERIES = ['previous', 'lost'] as const satisfies readonly StateRecovery[];

/** The `store` label of wedgewatch_state_save_errors_total. */
export const STATE_STORES = ['log_offsets', 'journal_cursors', 'events_journal'] as const;

export interface ProbeSlot {
  probe: string;
  kind: ProbeKind;
  endpoint: string;
  conn: ConnKind;
}

/**
 * Creates every counter series of `config` at 0 (inc by 0 leaves an existing series as it is), and a
 * last-line gauge for each log source that has none yet: a file missing from the start would otherwise
 * never export one, and the stale-log alert could not see it.
 */
export function createKnownSeries(
  metrics: Metrics,
  config: Config,
  slots: ReadonlyMap<string, readonly ProbeSlot[]>,
  now: number,
): void {
  for (const store of STATE_STORES) metrics.stateSaveErrors.inc({ store }, 0);
  for (const store of ['log_offsets', 'journal_cursors'] as const)
    for (const recovery of STATE_RECOVERIES) metrics.stateLoadErrors.inc({ store, recovery }, 0);
  for (const target of config.targets) {
    for (const slot of slots.get(target.name) ?? []) {
      for (const labels of probeSeries(slot, target.name)) metrics.probesTotal.inc(labels, 0);
    }
    for (const src of target.logs) {
      const labels = { target: target.name, service: src.service };
      for (const rule of compileRuleSet(src.packs, config.rules, src.service).rules) {
        for (const cls of ruleClasses(rule))
          metrics.logEvents.inc({ ...labels, rule: rule.name, class: cls, severity: rule.severity }, 0);
      }
      metrics.logLines.inc(labels, 0);
      metrics.logLinesTruncated.inc(labels, 0);
      for (const reason of LOG_READ_ERROR_REASONS) metrics.logReadErrors.inc({ ...labels, reason }, 0);
      for (const kind of LOG_ROTATION_KINDS) metrics.logRotations.inc({ ...labels, kind }, 0);
      if (!hasSeries(metrics.logLastLine, labels)) metrics.logLastLine.set(labels, now / 1000);
    }
    if (target.remediate !== undefined) {
      const action = remediationAction(target.remediate.command);
      for (const result of REMEDIATION_RESULTS)
        metrics.remediations.inc({ target: target.name, action, result }, 0);
    }
  }
}
