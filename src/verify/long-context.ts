// long-context: prompts of N tokens at concurrency 1, a warm-up and --repeat trials, with the same figures as a
// throughput level (TTFT above all: prefill of a long prompt is where a context-length regression shows). N is
// --long-context.tokens, or else 90 % of the max_model_len the server's /v1/models reports (SGLang's and vLLM's
// ModelCard carry it), less the output.
import { Client } from '../lib/http/undici.js';
import { levelFigureSet } from './level-figures.js';
import { readCapped } from './read-capped.js';
import { fixed1, secs } from './stats.js';
import type { Target } from './target.js';
import { medianTrial } from './throughput.js';
import { runTrials } from './trials.js';
import { defineStep } from './types.js';

export interface LongContextKnobs {
  /** Prompt tokens; 0 = from the server's max_model_len. */
  tokens: number;
  n: number;
  maxTokens: number;
  timeoutMs: number;
}

/** Used when neither the flag nor the server gives a context length. */
export const FALLBACK_TOKENS = 8192;

/** max_model_len of `model` from GET /v1/models, if the server reports it. */
export async function serverMaxContext(target: Target, timeoutMs = 10_000): Promise<number | undefined> {
  const client = new Client(target.origin);
  try {
    const res = await client.request({
      method: 'GET',
      path: target.modelsPath,
      headers: { ...target.headers, accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await readCapped(res.body, 4 * 1024 * 1024);
    if (res.statusCode !== 200) return undefined;
    const data = (JSON.parse(text) as { data?: { id?: unknown; max_model_len?: unknown }[] }).data ?? [];
    const card = data.find((m) => m.id === target.model) ?? (data.length === 1 ? data[0] : undefined);
    const n = card?.max_model_len;
    return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  } finally {
    await client.destroy().catch(() => {});
  }
}

const WORDS =
  'the keeper climbed the stairs of the old light and looked out over the grey sea at night '.split(' ');

/**
 * A user message of about `tokens` tokens: common English words are about one token each for the usual BPE
 * vocabularies (the server's usage.prompt_tokens is reported, so the real count is visible).
 */
export function promptOfTokens(tokens: number): string {
  const words: string[] = [];
  for (let i = 0; words.length < tokens; i++) words.push(WORDS[i % (WORDS.length - 1)]!);
  return words.join(' ');
}

export const longContextStep = defineStep<LongContextKnobs>({
  name: 'long-context',
  flagPrefix: 'long-context',
  summary: 'prompts of N tokens (flag, or 90% of the server max_model_len): TTFT, latency, tok/s per trial',
  defaults: { tokens: 0, n: 2, maxTokens: 64, timeoutMs: 300_000 },
  knobs: [
    {
      key: 'tokens',
      flag: 'tokens',
      kind: 'int',
      help: 'prompt length in tokens (default: 90% of the max_model_len /v1/models reports, else 8192)',
    },
    { key: 'n', flag: 'n', kind: 'int', help: 'requests per trial (one at a time)' },
    { key: 'maxTokens', flag: 'max-tokens', kind: 'int', help: 'max_tokens per request' },
    { key: 'timeoutMs', flag: 'timeout', kind: 'duration', help: 'limit per request' },
  ],
  async run(ctx, k) {
    let tokens = k.tokens;
    let source = '--long-context.tokens';
    if (!(tokens > 0)) {
      const max = await serverMaxContext(ctx.target);
      tokens = max ? Math.max(1, Math.floor(max * 0.9) - k.maxTokens) : FALLBACK_TOKENS;
      source = max
        ? `90% of max_model_len ${max}, less max_tokens`
        : `the server reports no max_model_len: ${FALLBACK_TOKENS}`;
    }
    ctx.progress(`prompts of ~${tokens} tokens (${source})`);
    const messages = [{ role: 'user', content: promptOfTokens(tokens) }];
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
      details: [line, ...(lt.warmupFlag ? [`warning: ${lt.warmupFlag}`] : [])],
      figures: levelFigureSet('long', lt.trials),
      data: { tokens, source, ...lt },
      saved: { tokens, source, median: med },
    };
  },
});
