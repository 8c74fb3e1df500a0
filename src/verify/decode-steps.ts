// Tokens per decode step: llama.cpp's direct evidence of batching. Its /metrics (with --metrics) counts every
// llama_decode() call, `llamacpp:n_decode_total`, and the tokens generated, `llamacpp:tokens_predicted_total`
// (ggml-org/llama.cpp tools/server/server-task.cpp:1538 and :1546 @80fb11a). One decode step advances every busy
// slot by one token (server-context.cpp:4054 metrics_post_decode counts one call however many slots it served), so
// over a window where N requests ran together the tokens generated per step approach N, and requests served one
// after another give at most 1 (the prompt's own decode steps bring it just under). tokens_predicted_total moves
// only when a request ends (server-context.cpp:4113 metrics_on_prediction, from the slot's release), so the two
// readings are taken before the requests start and after the last one ended, when every request is counted.
import { Client } from '../lib/http/undici.js';
import { readCapped } from './read-capped.js';

const DECODES = 'llamacpp:n_decode_total';
const PREDICTED = 'llamacpp:tokens_predicted_total';
/** A metrics page past this is not one to read. */
const BODY_MAX_BYTES = 8 * 1024 * 1024;

export interface DecodeCounters {
  decodes: number;
  predicted: number;
}

/** Both counters from a Prometheus text exposition, or undefined when either is missing (not llama.cpp). */
export function decodeCountersFromMetrics(text: string): DecodeCounters | undefined {
  let decodes: number | undefined;
  let predicted: number | undefined;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const read = (name: string): number | undefined => {
      if (!line.startsWith(name) || (line[name.length] !== ' ' && line[name.length] !== '{'))
        return undefined;
      const v = Number(line.slice(line.lastIndexOf(' ') + 1));
      return Number.isFinite(v) && v >= 0 ? v : undefined;
    };
    decodes = read(DECODES) ?? decodes;
    predicted = read(PREDICTED) ?? predicted;
  }
  return decodes !== undefined && predicted !== undefined ? { decodes, predicted } : undefined;
}

/**
 * Tokens per decode step between two readings; undefined when either reading is missing or no step ran (or a
 * counter went back: the server restarted between them, and the difference means nothing).
 */
export function tokensPerStep(
  before: DecodeCounters | undefined,
  after: DecodeCounters | undefined,
): { perStep: number; decodes: number; predicted: number } | undefined {
  if (!before || !after) return undefined;
  const decodes = after.decodes - before.decodes;
  const predicted = after.predicted - before.predicted;
  if (decodes <= 0 || predicted < 0) return undefined;
  return { perStep: predicted / decodes, decodes, predicted };
}

/** One bounded read of `metricsUrl`'s counters; undefined when it fails or carries none. */
export async function readDecodeCounters(
  metricsUrl: string,
  timeoutMs = 5_000,
): Promise<DecodeCounters | undefined> {
  const url = new URL(metricsUrl);
  const client = new Client(url.origin);
  try {
    const res = await client.request({
      method: 'GET',
      path: url.pathname + url.search,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const text = await readCapped(res.body, BODY_MAX_BYTES);
    return res.statusCode === 200 ? decodeCountersFromMetrics(text) : undefined;
  } catch {
    return undefined;
  } finally {
    await client.destroy().catch(() => {});
  }
}
