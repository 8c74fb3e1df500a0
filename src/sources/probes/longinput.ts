// longinput: one completion with a prompt of `promptTokens` tokens and a tiny answer. Engines hang or crawl only
// past a context length — a chunked prefill, a KV transfer of many blocks, a kernel tuned on short contexts — and
// every other probe sends a few tokens. The text is the built-in one (./prompt-text.ts) behind a per-run nonce, so
// no prefix cache serves it; the question at its end asks for another nonce back, judged strictly (./answer.ts).
// Sparse by default (README "Probe load per target"): each run is a real prefill of the whole prompt.
import { randomInt } from 'node:crypto';
import type { ProbeOf } from '../../config/schema.js';
import { echoQuestion, judgeReply, nonce, type Rng } from './answer.js';
import { runChatStream } from './chat-stream.js';
import { fillerText } from './prompt-text.js';
import { ProbeFailure, type ProbeContext, type ProbeFn, type ProbeOutcome } from './types.js';

type Ctx = ProbeContext<ProbeOf<'longinput'>>;

const cryptoRng: Rng = () => randomInt(0, 2 ** 31) / 2 ** 31;

/** Tokens of the prompt that are not filler: the nonce line and the question (upper bound). */
export const LONGINPUT_OVERHEAD = 64;

/** The prompt of one run: a nonce first, about `promptTokens` tokens in all, the echo question last. */
export function longPrompt(promptTokens: number, rng: Rng): { prompt: string; expected: string } {
  const q = echoQuestion(rng);
  const head = `Document ${nonce(rng)}. Read it, then answer the question after it.`;
  const body = fillerText(Math.max(0, promptTokens - LONGINPUT_OVERHEAD));
  return { prompt: `${head}\n\n${body}\n\n${q.prompt}`, expected: q.expected };
}

export const longinputProbe: ProbeFn<ProbeOf<'longinput'>> = (ctx) => runLonginput(ctx);

export async function runLonginput(ctx: Ctx, rng: Rng = cryptoRng): Promise<ProbeOutcome> {
  const { promptTokens, maxTokens } = ctx.probe;
  const { prompt, expected } = longPrompt(promptTokens, rng);
  const q = { kind: 'echo' as const, prompt, expected };
  ctx.progress.step = `a ${promptTokens}-token prompt`;
  const s = await runChatStream(ctx, { messages: [{ role: 'user', content: prompt }] });
  const v = judgeReply(q, s, maxTokens);
  const sent = `${promptTokens}-token prompt${s.promptTokens !== undefined ? ` (${s.promptTokens} by the engine's count)` : ''}`;
  if (!v.ok) throw new ProbeFailure(v.result, `${sent}: ${v.message}`, s.status);
  return { result: 'ok', status: s.status, tokens: s.tokens, tokensPerSecond: s.tokensPerSecond };
}
