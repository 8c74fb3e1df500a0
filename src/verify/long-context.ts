// long-context: prompts of N tokens at concurrency 1, a warm-up and --repeat trials, with the same figures as a
// throughput level (TTFT above all: prefill of a long prompt is where a context-length regression shows). N is
// --long-context.tokens, or else 90 % of the context the server reports (server-info.ts: vLLM's and SGLang's
// max_model_len, llama.cpp's n_ctx), less the output — at most --long-context.cap tokens either way: the server
// chooses the number it reports, and a prompt is sized by the user, never by the server alone.
import { levelFigureSet } from './level-figures.js';
import { GeneratedPrompt } from './prompt-text.js';
import { readServerInfo } from './server-info.js';
import { fixed1, secs } from './stats.js';
import { medianTrial, reconnectedTrials } from './throughput.js';
import { runTrials } from './trials.js';
import { intKnob, maxTokensKnob, timeoutKnob } from './knob-specs.js';
import { defineStep, UsageError } from './types.js';

export interface LongContextKnobs {
  /** Prompt tokens; 0 = from the context the server reports. */
  tokens: number;
  /** The longest prompt verify sends, in tokens (--long-context.cap). */
  capTokens: number;
  n: number;
  maxTokens: number;
  timeoutMs: number;
}

/** Used when neither the flag nor the server gives a context length. */
export const FALLBACK_TOKENS = 8192;
/** The default cap: 128 Ki tokens, the context of most served models; a longer one is a flag away. */
export const DEFAULT_CAP_TOKENS = 131_072;
/**
 * The largest cap accepted: 16 Mi tokens, past the longest context any served model has (10 M). The prompt is
 * streamed, so memory is not what limits it; a number beyond this is a typo or the server's fiction.
 */
export const MAX_CAP_TOKENS = 16_777_216;

/** The prompt length and where it came from, given the knobs and what the server reports. */
export function promptTokens(
  k: Pick<LongContextKnobs, 'tokens' | 'capTokens' | 'maxTokens'>,
  reported: { value: number; source: string } | undefined,
): { tokens: number; source: string } {
  if (k.tokens > 0) return { tokens: k.tokens, source: '--long-context.tokens' };
  if (!reported) {
    const tokens = Math.min(FALLBACK_TOKENS, k.capTokens);
    return { tokens, source: `the server reports no context length: ${tokens}` };
  }
  const want = Math.max(1, Math.floor(reported.value * 0.9) - k.maxTokens);
  const from = `90% of ${reported.source} ${reported.value}, less max_tokens`;
  if (want <= k.capTokens) return { tokens: want, source: from };
  const why =
    reported.value > MAX_CAP_TOKENS
      ? `the server reports ${reported.source} ${reported.value}, more than any model's context`
      : `${from} would be ${want}`;
  return {
    tokens: k.capTokens,
    source: `--long-context.cap ${k.capTokens} (${why}; raise the cap to send more)`,
  };
}

export const longContextStep = defineStep<LongContextKnobs>({
  name: 'long-context',
  flagPrefix: 'long-context',
  summary: 'prompts of N tokens (flag, or 90% of the server max_model_len): TTFT, latency, tok/s per trial',
  knobs: {
    tokens: intKnob(
      'tokens',
      0,
      'prompt length in tokens (default: 90% of the context the server reports, else 8192; at most the cap)',
    ),
    capTokens: intKnob(
      'cap',
      DEFAULT_CAP_TOKENS,
      `the longest prompt sent, in tokens (at most ${MAX_CAP_TOKENS})`,
    ),
    n: intKnob('n', 2, 'requests per trial (one at a time)'),
    maxTokens: maxTokensKnob(64, 'per request'),
    timeoutMs: timeoutKnob(300_000),
  },
  check(k) {
    if (k.capTokens > MAX_CAP_TOKENS)
      throw new UsageError(
        `--long-context.cap: ${k.capTokens} tokens is longer than any model's context (at most ${MAX_CAP_TOKENS})`,
      );
    if (k.tokens > k.capTokens)
      throw new UsageError(
        `--long-context.tokens: ${k.tokens} is more than --long-context.cap ${k.capTokens}; raise the cap to send a prompt that long`,
      );
  },
  async run(ctx, k) {
    const { tokens, source } = promptTokens(
      k,
      k.tokens > 0 ? undefined : (await readServerInfo(ctx.target)).context,
    );
    ctx.progress(`prompts of ~${tokens} tokens (${source})`);
    // Streamed into each request as it is sent, never held whole (prompt-text.ts).
    const messages = [{ role: 'user', content: new GeneratedPrompt(tokens) }];
    const lt = await runTrials(
      ctx.target,
      { concurrency: 1, n: k.n, maxTokens: k.maxTokens, timeoutMs: k.timeoutMs, messages },
      ctx.repeat,
      ctx.slo,
      (label, t) =>
        ctx.progress(
          `${label}: ttft p50=${secs(t.ttftP50Ms)}, p50 lat=${secs(t.p50LatMs)}, errs=${t.errors}`,
        ),
    );
    const med = medianTrial(lt.trials);
    const errs = lt.trials.reduce((s, t) => s + t.errors, 0) + lt.warmup.errors;
    const line =
      `~${tokens} prompt tokens, n=${k.n} per trial, max_tokens=${k.maxTokens} | ttft p50=${secs(med.ttftP50Ms)} p99=${secs(med.ttftP99Ms)} | ` +
      `p50 lat=${secs(med.p50LatMs)} | per-req=${fixed1(med.perReqTokS)} tok/s | errs=${errs} (median of ${lt.trials.length} trials)`;
    const failed = lt.trials.find((t) => t.firstError) ?? (lt.warmup.firstError ? lt.warmup : undefined);
    return {
      ok: errs === 0,
      summary:
        `~${tokens} tokens: ttft p50 ${secs(med.ttftP50Ms)}, ${fixed1(med.perReqTokS)} tok/s` +
        (errs ? `; ${errs} errors (${failed?.firstError})` : ''),
      details: [
        line,
        ...(lt.warmupFlag ? [`warning: ${lt.warmupFlag}`] : []),
        ...reconnectedTrials('long-context', lt),
      ],
      figures: levelFigureSet('long', lt.trials),
      data: { tokens, source, ...lt },
      saved: { tokens, source, median: med },
    };
  },
});
