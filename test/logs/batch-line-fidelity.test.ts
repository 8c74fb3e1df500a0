// SGLang batch lines read as SGLang computes them (issue 26): a hybrid SWA/mamba engine's usage is its fullest
// pool, and our own health probe's 1-token prefill on a PD prefill is no progress.
import { describe, expect, it } from 'vitest';
import { parseSglangLine } from '../../src/sources/logs/engine-lines.js';

// The parts pool_stats_observer.py@00b3dd7 get_prefill_usage_msg_parts / get_decode_usage_msg_parts print for a
// hybrid SWA+mamba model (no plain `token usage`), inside log_prefill_stats / log_decode_stats.
const HYBRID_DECODE =
  '[2026-08-10 14:00:01 TP0] Decode batch, #running-req: 39, #full token: 9000, full token usage: 0.20, #swa token: 4000, swa token usage: 0.62, mamba num: 30, mamba usage: 0.35, cuda graph: True, gen throughput (token/s): 499.85, #queue-req: 3'; // prettier-ignore
const HYBRID_PREFILL =
  '[2026-08-10 14:00:01 TP0] Prefill batch, #new-seq: 2, #new-token: 512, #cached-token: 0, full token usage: 0.10, mamba usage: 0.31, #running-req: 0, #queue-req: 0'; // prettier-ignore

describe('SGLang batch lines', () => {
  it('hybrid models: usage is max(full, swa, mamba), as SchedulerStats.token_usage is', () => {
    expect(parseSglangLine(HYBRID_DECODE)?.values.tokenUsage).toBe(0.62);
    expect(parseSglangLine(HYBRID_PREFILL)?.values.tokenUsage).toBe(0.31);
    // A plain engine's `token usage` is read as printed.
    expect(
      parseSglangLine('[2026-08-10 14:00:01 TP0] Decode batch, #running-req: 1, #token: 10, token usage: 0.05, gen throughput (token/s): 9.00, #queue-req: 0')?.values.tokenUsage, // prettier-ignore
    ).toBe(0.05);
  });

  it("the health check's 1-token prefill (1 sequence, 1 new token, none cached) is no progress", () => {
    const probe = parseSglangLine(
      '[2026-08-10 14:00:01] Prefill batch, #new-seq: 1, #new-token: 1, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, #pending-token: 0, #bootstrap-req: 0, #inflight-req: 3', // prettier-ignore
    );
    expect(probe?.progress).toBe(false);
    // A user's request whose prompt was cached still prints one new token, with its cached tokens: progress.
    const cached = parseSglangLine(
      '[2026-08-10 14:00:01] Prefill batch, #new-seq: 1, #new-token: 1, #cached-token: 812, token usage: 0.01, #running-req: 0, #queue-req: 0',
    );
    expect(cached?.progress).toBe(true);
    const two = parseSglangLine(
      '[2026-08-10 14:00:01] Prefill batch, #new-seq: 2, #new-token: 2, #cached-token: 0, token usage: 0.01, #running-req: 0, #queue-req: 0',
    );
    expect(two?.progress).toBe(true);
  });
});
