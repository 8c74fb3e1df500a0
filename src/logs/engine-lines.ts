// Engine gauges from the periodic lines engines print: SGLang `Prefill batch` / `Decode batch`
// (engine-signals.md §2, all documented variants) and vLLM's `Engine 000:` stats line (§5).
import type { EngineGauge } from '../config/schema.js';
import { setEngineGauges } from '../engines/gauges.js';
import type { EngineMetrics } from '../metrics.js';
import type { EngineSignal } from '../signals.js';
import type { EngineLineKind } from './packs/index.js';

export type EngineValues = Partial<Record<EngineGauge, number>>;

/** The literal that finds each kind of line in a chunk (searched backwards: only the last one counts). */
export const ENGINE_LINE_MARKERS: Record<EngineLineKind, string[]> = {
  sglang_batch: ['Prefill batch', 'Decode batch'],
  vllm_stats: ['Avg prompt throughput:'],
};

// `key: value` pairs after `batch`: keys like `#running-req`, `token usage`, `gen throughput (token/s)`.
const PAIR = /(#?[a-z][a-z -]*(?: \(token\/s\))?): ([\d.]+|True|False)/g;
const BATCH = /(?:Prefill|Decode) batch(?: \[\d+\])?[.,] /;

const SGLANG_KEYS: Record<string, EngineGauge> = {
  '#running-req': 'running',
  '#queue-req': 'queued',
  '#prealloc-req': 'preallocQueue',
  '#bootstrap-req': 'preallocQueue',
  '#transfer-req': 'transferQueue',
  '#inflight-req': 'transferQueue',
  'token usage': 'tokenUsage',
  'gen throughput (token/s)': 'genThroughput',
};

export function parseSglangBatch(line: string): EngineValues | undefined {
  const m = BATCH.exec(line);
  if (!m) return undefined;
  const out: EngineValues = {};
  let fullUsage: number | undefined;
  PAIR.lastIndex = m.index + m[0].length;
  for (let p = PAIR.exec(line); p; p = PAIR.exec(line)) {
    const key = p[1]!;
    const value = Number(p[2]);
    if (!Number.isFinite(value)) continue;
    if (key === 'full token usage') fullUsage = value;
    const g = SGLANG_KEYS[key];
    if (g !== undefined) out[g] = value;
  }
  // Hybrid SWA/GDN builds print `full token usage` instead of `token usage`.
  if (out.tokenUsage === undefined && fullUsage !== undefined) out.tokenUsage = fullUsage;
  return Object.keys(out).length > 0 ? out : undefined;
}

const VLLM_NUM = (label: string) => new RegExp(`${label}: ([\\d.]+)`);
const VLLM = {
  gen: VLLM_NUM('Avg generation throughput'),
  running: VLLM_NUM('Running'),
  waiting: /(?:Waiting|Pending): ([\d.]+) reqs/,
  kv: /GPU KV cache usage: ([\d.]+)%/,
};

export function parseVllmStats(line: string): EngineValues | undefined {
  if (!line.includes('Avg prompt throughput:')) return undefined;
  const out: EngineValues = {};
  const num = (re: RegExp) => {
    const m = re.exec(line);
    return m ? Number(m[1]) : undefined;
  };
  const gen = num(VLLM.gen);
  if (gen !== undefined) out.genThroughput = gen;
  const running = num(VLLM.running);
  if (running !== undefined) out.running = running;
  const waiting = num(VLLM.waiting);
  if (waiting !== undefined) out.queued = waiting;
  const kv = num(VLLM.kv);
  if (kv !== undefined) out.tokenUsage = kv / 100;
  return Object.keys(out).length > 0 ? out : undefined;
}

export const ENGINE_LINE_PARSERS: Record<EngineLineKind, (line: string) => EngineValues | undefined> = {
  sglang_batch: parseSglangBatch,
  vllm_stats: parseVllmStats,
};

/** Sets the engine gauges and builds the signal; `batch` is true for periodic batch/stats lines. */
export function applyEngineValues(
  metrics: EngineMetrics,
  labels: { target: string; service: string },
  values: EngineValues,
  nowMs: number,
  batch: boolean,
): EngineSignal {
  setEngineGauges(metrics, labels, values);
  if (batch) metrics.engineLastBatch.set(labels, nowMs / 1000);
  const sig: EngineSignal = { kind: 'engine', source: 'log', time: nowMs, ...labels };
  if (values.running !== undefined) sig.running = values.running;
  if (values.queued !== undefined) sig.queued = values.queued;
  if (values.transferQueue !== undefined) sig.transferQueue = values.transferQueue;
  if (values.preallocQueue !== undefined) sig.preallocQueue = values.preallocQueue;
  if (values.genThroughput !== undefined) sig.genThroughput = values.genThroughput;
  if (values.tokenUsage !== undefined) sig.tokenUsage = values.tokenUsage;
  return sig;
}
