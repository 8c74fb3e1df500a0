// After a reload, the series of what the new config no longer has: a removed target's target_wedged=1
// would keep an alert firing forever, a removed engine's engine_stalled=1 likewise.
import type { Counter, Gauge } from 'prom-client';
import type { Metrics } from '../../metrics.js';

export interface Kept {
  /** Target name → the services it still scrapes or tails. */
  targets: Map<string, Set<string>>;
  /** `target|probe|endpoint|conn|kind` of every probe slot the new config runs; absent: probe series are left alone. */
  probeSlots?: Set<string>;
}

type AnyGauge = Gauge<string>;
/** A per-target family that is removed, not zeroed: gauges, and the heartbeat counter (a removed target's flat
 * counter would read as a stalled scheduler forever). */
type TargetFamily = AnyGauge | Counter<string>;

async function removeWhere(g: TargetFamily, drop: (labels: Record<string, string | number>) => boolean) {
  for (const v of (await g.get()).values) {
    const labels = v.labels as Record<string, string | number>;
    if (drop(labels)) g.remove(labels);
  }
}

/** Removes the label sets of targets (and engine services) that `kept` does not list. */
export async function forgetRemovedSeries(metrics: Metrics, kept: Kept): Promise<void> {
  const goneTarget = (l: Record<string, string | number>) => !kept.targets.has(String(l.target));
  const targetGauges: TargetFamily[] = [
    metrics.targetState,
    metrics.targetWedged,
    metrics.targetStateSince,
    metrics.targetEnteredOk,
    metrics.schedulerTick,
    metrics.schedulerRounds,
    metrics.schedulerInterval,
    metrics.targetDiagnosis,
    metrics.remediationPaused,
  ];
  for (const g of targetGauges) await removeWhere(g, goneTarget);
  const engineGauges: AnyGauge[] = [
    metrics.engineRunning,
    metrics.engineQueued,
    metrics.engineTransferQueue,
    metrics.enginePreallocQueue,
    metrics.engineGenThroughput,
    metrics.engineTokenUsage,
    metrics.engineLastBatch,
    metrics.engineBytesPerFullToken,
    metrics.engineScrapeSuccess,
    metrics.engineStalled,
    metrics.engineCrawling,
    metrics.engineThroughputRatio,
    metrics.engineSleeping,
    metrics.engineKvTransferLatency,
    metrics.engineWorkersUnhealthy,
    metrics.engineCircuitsOpen,
    metrics.engineOldestRequestAge,
  ];
  const goneEngine = (l: Record<string, string | number>) =>
    !(kept.targets.get(String(l.target))?.has(String(l.service)) ?? false);
  for (const g of engineGauges) await removeWhere(g, goneEngine);
  const slots = kept.probeSlots;
  if (slots !== undefined) {
    // A removed probe's probe_success=0 would keep a probe alert firing after the probe is gone.
    const goneSlot = (l: Record<string, string | number>) =>
      !slots.has(
        `${String(l.target)}|${String(l.probe)}|${String(l.endpoint)}|${String(l.conn)}|${String(l.kind)}`,
      );
    for (const g of [
      metrics.probeSuccess,
      metrics.probeTokensPerSecond,
      metrics.probeLastRun,
      // A removed slot's wrong-answer hold would page on for a probe that no longer runs.
      metrics.probeWrongOutputHeld,
      metrics.probeWrongAnswers,
    ] as AnyGauge[]) {
      await removeWhere(g, goneSlot);
    }
  }
}
