// SGLang's periodic `Prefill batch` / `Decode batch` lines are most of an engine log (about 96% in a busy one)
// and are made only of `key: number` fields (engine-signals.md §2). A rule none of whose literals can occur in
// such a line never needs to look at one, so the scanner skips them after a cheap prefix check instead of
// running the prefilter over their text.

// Every documented variant, digits as they come: a literal is tested against these with digits normalised.
const SAMPLES = [
  '[2026-02-27 15:01:51 DP2 PP1 ATTN_CP1 MOE_DP1 TP3 EP2] Prefill batch [12], #new-seq: 1, #new-token: 512, #cached-token: 0, token usage: 0.01, full token usage: 0.47, swa token usage: 0.20, mamba usage: 0.10, #running-req: 0, #queue-req: 0, #prealloc-req: 0, #bootstrap-req: 0, #inflight-req: 0, input throughput (token/s): 1234.56, ',
  '[2026-02-27 15:01:51 TP0] Decode batch [40]. #running-req: 39, #token: 47393, #full token: 79385, full token usage: 0.47, #swa token: 4000, swa token usage: 0.20, mamba num: 3, mamba usage: 0.10, token usage: 0.67, pre-allocated usage: 0.05, #prealloc-req: 2, #transfer-req: 0, #retracted-req: 0, accept len: 2.31, accept rate: 0.58, cuda graph: True, cuda graph: False, gen throughput (token/s): 499.85, #queue-req: 3, ',
];

const digitsAsZero = (s: string) => s.replace(/\d+/g, '0');
const NORMALISED = SAMPLES.map(digitsAsZero);

/** True when `literal` cannot occur in any SGLang batch line. */
export function literalAvoidsBatchLines(literal: string): boolean {
  const lit = digitsAsZero(literal);
  return !NORMALISED.some((s) => s.includes(lit));
}

/** Whether s[p, end) is an SGLang batch line: `[…] Prefill batch` or `[…] Decode batch`. */
export function isBatchLine(s: string, p: number, end: number): boolean {
  if (s.charCodeAt(p) !== 91 /* [ */) return false;
  const close = s.indexOf(']', p);
  if (close < 0 || close >= end || close - p > 96) return false;
  return s.startsWith(' Decode batch', close + 1) || s.startsWith(' Prefill batch', close + 1);
}
