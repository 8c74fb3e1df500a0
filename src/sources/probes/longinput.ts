// longinput: one completion with a long prompt and a tiny answer. Engines hang or crawl only past a context length —
// a chunked prefill, a KV transfer of many blocks, a kernel tuned on short contexts — and every other probe sends a
// few tokens. The size is the deployment's: `contextShare` of the context it reports (./context-length.ts), at most
// `maxPromptTokens` (the engine chooses that number; the probe never sends more than the config allows), or a fixed
// `promptTokens`. The text is the built-in one (./prompt-text.ts) behind a per-run nonce, so no prefix cache serves
// it; the question at its end asks for another nonce back, judged strictly (./answer.ts). Sparse by default
// (docs/configuration.md "Probe load per target"): each run is a real prefill of the whole prompt.
import { randomInt } from 'node:crypto';
import type { ProbeOf } from '../../config/schema.js';
import { echoQuestion, judgeReply, nonce, type Rng } from './answer.js';
import { runChatStream } from './chat-stream.js';
import { readContextLength, type ContextLength } from './context-length.js';
import { fillerText } from './prompt-text.js';
import { ProbeFailure, type ProbeContext, type ProbeFn, type ProbeOutcome } from './types.js';

type Ctx = ProbeContext<ProbeOf<'longinput'>>;

const cryptoRng: Rng = () => randomInt(0, 2 ** 31) / 2 ** 31;

/** Tokens of the prompt that are not filler: the nonce line and the question (upper bound). */
export const LONGINPUT_OVERHEAD = 64;
/** The size when neither the config nor the deployment gives one (capped by maxPromptTokens). */
export const FALLBACK_PROMPT_TOKENS = 8192;
/** The shortest prompt sent: shorter is no long input. */
export const MIN_PROMPT_TOKENS = 256;

/** The prompt of one run: a nonce first, about `promptTokens` tokens in all, the echo question last. */
export function longPrompt(promptTokens: number, rng: Rng): { prompt: string; expected: string } {
  const q = echoQuestion(rng);
  const head = `Document ${nonce(rng)}. Read it, then answer the question after it.`;
  const body = fillerText(Math.max(0, promptTokens - LONGINPUT_OVERHEAD));
  return { prompt: `${head}\n\n${body}\n\n${q.prompt}`, expected: q.expected };
}

/**
 * The prompt size of a run and why: the config's promptTokens, else contextShare of the reported context, room
 * left for the answer, at most maxPromptTokens; else the fallback, at most maxPromptTokens.
 */
export function promptSize(
  p: Pick<ProbeOf<'longinput'>, 'promptTokens' | 'contextShare' | 'maxPromptTokens' | 'maxTokens'>,
  reported: ContextLength | undefined,
): { tokens: number; why: string } {
  if (p.promptTokens !== undefined) return { tokens: p.promptTokens, why: 'promptTokens' };
  if (reported === undefined) {
    const tokens = Math.min(FALLBACK_PROMPT_TOKENS, p.maxPromptTokens);
    return { tokens, why: 'the deployment reports no context length' };
  }
  const share = Math.floor(reported.tokens * p.contextShare);
  const room = reported.tokens - p.maxTokens - LONGINPUT_OVERHEAD;
  const want = Math.max(MIN_PROMPT_TOKENS, Math.min(share, room));
  if (want <= p.maxPromptTokens)
    return { tokens: want, why: `${p.contextShare} of ${reported.source} ${reported.tokens}` };
  return {
    tokens: p.maxPromptTokens,
    why: `maxPromptTokens (${p.contextShare} of ${reported.source} ${reported.tokens} would be ${want})`,
  };
}

export const longinputProbe: ProbeFn<ProbeOf<'longinput'>> = (ctx) => runLonginput(ctx);

export async function runLonginput(ctx: Ctx, rng: Rng = cryptoRng): Promise<ProbeOutcome> {
  const { maxTokens } = ctx.probe;
  const reported = ctx.probe.promptTokens === undefined ? await readContextLength(ctx) : undefined;
  const { tokens: promptTokens, why } = promptSize(ctx.probe, reported);
  const { prompt, expected } = longPrompt(promptTokens, rng);
  const q = { kind: 'echo' as const, prompt, expected };
  ctx.progress.step = `a ${promptTokens}-token prompt (${why})`;
  const s = await runChatStream(ctx, { messages: [{ role: 'user', content: prompt }] });
  const v = judgeReply(q, s, maxTokens);
  const sent = `${promptTokens}-token prompt${s.promptTokens !== undefined ? ` (${s.promptTokens} by the engine's count)` : ''}`;
  if (!v.ok) throw new ProbeFailure(v.result, `${sent}: ${v.message}`, s.status);
  return { result: 'ok', status: s.status, tokens: s.tokens, tokensPerSecond: s.tokensPerSecond };
}
