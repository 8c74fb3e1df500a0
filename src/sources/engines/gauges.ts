// The engine gauges, set the same way whether the values came from a batch log line or a /metrics scrape.
import type { EngineMetrics } from '../../metrics.js';

export interface EngineGaugeValues {
  running?: number;
  queued?: number;
  transferQueue?: number;
  preallocQueue?: number;
  genThroughput?: number;
  tokenUsage?: number;
  bytesPerFullToken?: number;
  kvTransferLatencySeconds?: number;
  /** 1 asleep, 0 awake. */
  sleeping?: number;
  workersUnhealthy?: number;
  circuitOpen?: number;
  oldestRequestAgeSeconds?: number;
}

export const ENGINE_GAUGE_METRICS = {
  running: 'engineRunning',
  queued: 'engineQueued',
  transferQueue: 'engineTransferQueue',
  preallocQueue: 'enginePreallocQueue',
  genThroughput: 'engineGenThroughput',
  tokenUsage: 'engineTokenUsage',
  bytesPerFullToken: 'engineBytesPerFullToken',
  kvTransferLatencySeconds: 'engineKvTransferLatency',
  sleeping: 'engineSleeping',
  workersUnhealthy: 'engineWorkersUnhealthy',
  circuitOpen: 'engineCircuitsOpen',
  oldestRequestAgeSeconds: 'engineOldestRequestAge',
} as const satisfies Record<keyof EngineGaugeValues, keyof EngineMetrics>;

/** Sets each gauge that has a value; a missing value leaves the gauge as it was. Returns the ones set. */
export function setEngineGauges(
  metrics: EngineMetrics,
  labels: { target: string; service: string },
  values: EngineGaugeValues,
): (keyof EngineGaugeValues)[] {
  const set: (keyof EngineGaugeValues)[] = [];
  for (const [key, metric] of Object.entries(ENGINE_GAUGE_METRICS) as [
    keyof EngineGaugeValues,
    (typeof ENGINE_GAUGE_METRICS)[keyof EngineGaugeValues],
  ][]) {
    const v = values[key];
    if (v === undefined) continue;
    metrics[metric].set(labels, v);
    set.push(key);
  }
  return set;
}

/** Removes the named gauges' series: values no source vouches for any more must not stand as current. */
export function clearEngineGauges(
  metrics: EngineMetrics,
  labels: { target: string; service: string },
  keys: readonly (keyof EngineGaugeValues)[],
): void {
  for (const key of keys) metrics[ENGINE_GAUGE_METRICS[key]].remove(labels);
}
