import client from 'prom-client';
import { LOG_PACKS, logSourceSchema, type LogSourceConfig } from '../../src/config/schema.js';
import { LogWatcher, type LogWatcherOptions } from '../../src/sources/logs/watcher.js';
import { createEngineMetrics, createLogMetrics } from '../../src/metrics.js';
import type { EngineSignal, LogEventSignal } from '../../src/core/signals.js';
import { quietLogger } from '../helpers/logger.js';

export function source(over: Partial<LogSourceConfig> & { path: string }): LogSourceConfig {
  return logSourceSchema.parse({ service: 'decode', packs: [...LOG_PACKS], ...over });
}

export function harness(opts: Partial<LogWatcherOptions> & { sources: LogSourceConfig[]; stateDir: string }) {
  const registry = new client.Registry();
  const metrics = { ...createLogMetrics(registry), ...createEngineMetrics(registry) };
  const events: LogEventSignal[] = [];
  const engine: EngineSignal[] = [];
  const watcher = new LogWatcher({
    target: 't1',
    userRules: [],
    metrics,
    logger: quietLogger('error'),
    onEvent: (e) => events.push(e),
    onEngine: (e) => engine.push(e),
    follow: { pollMs: 50, idleFlushMs: 300, retireQuietMs: 1000 },
    ...opts,
  });
  const value = async (name: keyof typeof metrics, labels: Record<string, string> = {}) => {
    const m = await metrics[name].get();
    return m.values
      .filter((v) => Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x))
      .reduce((n, v) => n + v.value, 0);
  };
  return { watcher, metrics, events, engine, value };
}
