// When to act on a wedge: pure, so cooldown, hourly cap, `after` and pause are tested with a fake clock.
import type { RemediateConfig } from '../../config/schema.js';
import type { TargetStateName } from '../../core/vocabulary.js';

export type SkipReason = 'cooldown' | 'capped' | 'paused';

export type Decision =
  | { kind: 'idle' }
  | { kind: 'wait' }
  | { kind: 'run' }
  | { kind: 'skip'; reason: SkipReason; report: boolean };

export interface Ledger {
  lastRunAt?: number;
  /** Times of runs within the last hour. */
  runs: number[];
  /** The `since` of the episode (wedge) the skip reports below belong to. */
  episode?: number;
  /** Skip reasons already counted in this episode: one metric increment per reason per wedge, not per tick. */
  reported: SkipReason[];
}

export const newLedger = (): Ledger => ({ runs: [], reported: [] });

const HOUR = 3_600_000;

const BETTER: Record<TargetStateName, number> = { unknown: -1, ok: 0, degraded: 1, wedged: 2, down: 3 };

export function decide(
  ledger: Ledger,
  target: { state: TargetStateName; since: number; verdict?: TargetStateName },
  now: number,
  cfg: RemediateConfig,
  paused: boolean,
): Decision {
  ledger.runs = ledger.runs.filter((t) => now - t < HOUR);
  const acts = target.state === 'wedged' || (target.state === 'down' && cfg.onDown);
  if (!acts) {
    ledger.episode = undefined;
    ledger.reported = [];
    return { kind: 'idle' };
  }
  if (ledger.episode !== target.since) {
    ledger.episode = target.since;
    ledger.reported = [];
  }
  if (now - target.since < cfg.after) return { kind: 'wait' };
  // The state is held by hysteresis while the evidence already says better (a completion passed since the wedge):
  // the engine is recovering, and a restart now would hit a healthy engine (issue 38: a remediation ran on one
  // that had recovered, and its run then capped the real wedge). Waiting records no run and burns no cap.
  if (
    target.verdict !== undefined &&
    target.verdict !== 'unknown' &&
    BETTER[target.verdict] < BETTER[target.state]
  )
    return { kind: 'wait' };
  const skip = (reason: SkipReason): Decision => {
    const report = !ledger.reported.includes(reason);
    if (report) ledger.reported.push(reason);
    return { kind: 'skip', reason, report };
  };
  if (paused) return skip('paused');
  if (ledger.lastRunAt !== undefined && now - ledger.lastRunAt < cfg.cooldown) return skip('cooldown');
  if (ledger.runs.length >= cfg.maxPerHour) return skip('capped');
  return { kind: 'run' };
}

export function recordRun(ledger: Ledger, now: number): void {
  ledger.lastRunAt = now;
  ledger.runs.push(now);
  // A new attempt in the same wedge may be skipped again later: report that again.
  ledger.reported = [];
}
