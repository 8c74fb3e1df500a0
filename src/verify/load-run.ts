// Runs n streaming completions at concurrency c over one undici Pool (c connections): the shared driver of
// the throughput and batching steps and of bench/verify-client.
import { Pool } from '../lib/http/undici.js';
import { streamChat, type StreamResult } from './load-client.js';
import type { Target } from './target.js';

export interface LoadRun {
  results: StreamResult[];
  wallMs: number;
}

export interface LoadOptions {
  concurrency: number;
  n: number;
  maxTokens: number;
  timeoutMs: number;
  messages?: unknown[];
  /** Keep token arrival times (inter-token latency figures). */
  recordTokenTimes?: boolean;
}

const PROMPT = [{ role: 'user', content: 'Write a long story about a lighthouse keeper.' }];

export async function runLoad(target: Target, o: LoadOptions): Promise<LoadRun> {
  const pool = new Pool(target.origin, {
    connections: o.concurrency,
    pipelining: 1,
    keepAliveTimeout: 60_000,
  });
  const results: StreamResult[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < o.n) {
      next++;
      results.push(
        await streamChat(pool, target, {
          messages: o.messages ?? PROMPT,
          maxTokens: o.maxTokens,
          timeoutMs: o.timeoutMs,
          recordTokenTimes: o.recordTokenTimes,
          // Throughput needs the engine to generate max_tokens every time.
          extra: { ignore_eos: true, temperature: 0 },
        }),
      );
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(o.concurrency, o.n) }, worker));
    return { results, wallMs: performance.now() - started };
  } finally {
    await pool.destroy().catch(() => {});
  }
}
