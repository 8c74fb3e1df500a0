// The engine core is stuck inside a step (a collective that never completes: one rank waits in an NCCL all-reduce
// its peers never join) and logs nothing, unlike shm_broadcast_hang's periodic wait line. vLLM's API server sets
// its gauges from the SchedulerStats each EngineCoreOutputs carries (vllm/v1/metrics/loggers.py
// PrometheusStatLogger.record, called by AsyncLLM's output handler), so a core that sends no outputs leaves them at
// the last step's values — 0 running / 0 waiting when it stopped between requests — and every counter still.
// `mode=absent`: /metrics does not answer either (the issue-41 shape "metrics that stop being scraped").
import type { FaultDef } from './types.js';

export const metricsFrozen: FaultDef = {
  name: 'metrics_frozen',
  engines: ['vllm'],
  summary:
    'the engine core hangs in a collective with no log line: gauges and counters freeze (mode=frozen) or /metrics stops answering (mode=absent)',
  params: {
    mode: {
      default: 'frozen',
      help: 'frozen: /metrics answers with frozen values; absent: /metrics never answers',
    },
  },
  validate(params) {
    return params.mode === 'frozen' || params.mode === 'absent'
      ? undefined
      : `mode must be frozen or absent (got ${JSON.stringify(params.mode)})`;
  },
  onEnable(ctl) {
    ctl.vllm?.setCoreHung(true);
  },
  onDisable(ctl) {
    ctl.vllm?.setCoreHung(false);
  },
  metricsAbsent(params) {
    return params.mode === 'absent';
  },
};
