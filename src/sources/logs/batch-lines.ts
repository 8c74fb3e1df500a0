// SGLang's periodic `Prefill batch` / `Decode batch` lines are most of an engine log (about 96% in a busy
// one) and are made only of `key: number` fields (SGLang managers/scheduler_metrics_mixin.py
// log_prefill_stats, log_decode_stats). A rule none of whose literals can occur in such a line never needs to
// look at one, so the scanner skips them after a cheap prefix check instead of running the prefilter over
// their text.

// Every variant of those two functions (@01bb3c8 and 2026), digits as they come: built-in rule literals are
// tested against these with digits normalised (the packs are curated, and a test keeps every pack rule off
// these lines).
const SAMPLES = [
  '[2026-02-27 15:01:51 DP2 PP1 ATTN_CP1 MOE_DP1 TP3 EP2] Prefill batch [12], #new-seq: 1, #new-token: 512, #cached-token: 0, cache hit rate: 0.00%, token usage: 0.01, full token usage: 0.47, swa token usage: 0.20, mamba usage: 0.10, #running-req: 0, #queue-req: 0, #pending-token: 0, waiting-image-req: 0, #prealloc-req: 0, #bootstrap-req: 0, #inflight-req: 0, cuda graph: True, cpu graph: False, input throughput (token/s): 1234.56, ',
  '[2026-02-27 15:01:51 TP0] Prefill batch. #new-seq: 1, #new-token: 1, #cached-token: 0, cache hit rate: 0.00%, token usage: 0.00, #running-req: 0, #queue-req: 0',
  '[2026-02-27 15:01:51 TP0] Decode batch [40]. #running-req: 39, #token: 47393, #full token: 79385, full token usage: 0.47, #swa token: 4000, swa token usage: 0.20, mamba num: 3, mamba usage: 0.10, token usage: 0.67, accept len: 2.31, accept rate: 0.58, pre-allocated usage: 0.05, #prealloc-req: 2, #transfer-req: 0, #retracted-req: 0, cuda graph: True, cpu graph: False, gen throughput (token/s): 499.85, #queue-req: 3, ',
];

const digitsAsZero = (s: string) => s.replace(/\d+/g, '0');
const NORMALISED = SAMPLES.map(digitsAsZero);

// What a batch line is made of: its `[time RANKS]` prefix, `Prefill`/`Decode batch`, lowercase `key: value` fields
// (values are numbers, percentages, True/False). A user rule is trusted to avoid batch lines only when each of its
// literals has something no batch line can hold: a character outside this alphabet, or a capitalised word that is
// none of the few a batch line has. Field names are open-ended (new SGLang versions add fields), so an all-lowercase
// literal may be a future field and never counts as safe.
const BATCH_ALPHABET = /^[a-z0-9 #\-.,:%()/[\]_PDTFEANCMO]*$/;
const BATCH_CAPITALISED = new Set([
  'Prefill',
  'Decode',
  'True',
  'False',
  'DP',
  'TP',
  'EP',
  'PP',
  'ATTN_CP',
  'MOE_DP',
]);

/** True when `literal` cannot occur in any SGLang batch line; `curated` rules are checked against the samples. */
export function literalAvoidsBatchLines(literal: string, curated: boolean): boolean {
  const lit = digitsAsZero(literal);
  if (NORMALISED.some((s) => s.includes(lit))) return false;
  if (curated) return true;
  if (!BATCH_ALPHABET.test(literal)) return true;
  // Inner words are whole words of the line; the first and last may be cut, so they need only be part of one.
  const words = literal.split(/[^A-Za-z_]+/).filter((w) => w !== '');
  const known = [...BATCH_CAPITALISED];
  return words.some((w, i) => {
    if (!/[A-Z]/.test(w)) return false;
    const inner = i > 0 && i < words.length - 1;
    return inner ? !BATCH_CAPITALISED.has(w) : !known.some((k) => k.includes(w));
  });
}

/** Whether s[p, end) is an SGLang batch line: `[…] Prefill batch` or `[…] Decode batch`. */
export function isBatchLine(s: string, p: number, end: number): boolean {
  return batchLineClose(s, p, end) >= 0;
}

/** The `]` that ends an SGLang batch line's prefix in s[p, end), or -1 when it is no batch line. */
export function batchLineClose(s: string, p: number, end: number): number {
  if (s.charCodeAt(p) !== 91 /* [ */) return -1;
  const close = s.indexOf(']', p);
  if (close < 0 || close >= end || close - p > 96) return -1;
  return s.startsWith(' Decode batch', close + 1) || s.startsWith(' Prefill batch', close + 1) ? close : -1;
}
