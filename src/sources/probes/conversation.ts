// conversation: `rounds` turns over the slot's one connection (keep-alive by default), each round sending the
// whole conversation so far — every earlier question and answer — plus a new user turn of `roundTokens`, the way a
// chat client talks to a deployment through its proxy. A real incident's hang needed several such rounds on one
// reused connection; short fresh-connection probes passed. Fails on a hang (the timeout names the round), on a
// wrong answer, or when a round's time to first token grows past `ttftGrowth` × round 1's and `ttftGrowthFloor`
// beyond it: a healthy engine with a prefix cache prefills only the new turn, so its first token does not wait on
// the length of the conversation. TTFT per round is exported (wedgewatch_probe_round_ttft_seconds).
import { randomInt } from 'node:crypto';
import type { ProbeOf } from '../../config/schema.js';
import type { RoundTiming } from '../../core/signals.js';
import { echoQuestion, judgeReply, nonce, type Rng } from './answer.js';
import { runChatStream } from './chat-stream.js';
import { fillerText } from './prompt-text.js';
import { ProbeFailure, type ProbeContext, type ProbeFn, type ProbeOutcome } from './types.js';

type Ctx = ProbeContext<ProbeOf<'conversation'>>;

const cryptoRng: Rng = () => randomInt(0, 2 ** 31) / 2 ** 31;

interface Message {
  role: 'user' | 'assistant';
  content: string;
}

/** The user turn of round `round` (1-based): a nonce-led block of text, then a question with a fresh answer. */
export function roundTurn(
  round: number,
  roundTokens: number,
  rng: Rng,
): { content: string; expected: string } {
  const q = echoQuestion(rng);
  const head = round === 1 ? `Conversation ${nonce(rng)}, part ${round}.` : `Part ${round}.`;
  // Each round's text starts where the last one stopped: the conversation never repeats itself.
  const body = fillerText(Math.max(0, roundTokens - 16), round * 1000);
  return { content: `${head} ${body}\n\n${q.prompt}`, expected: q.expected };
}

export const conversationProbe: ProbeFn<ProbeOf<'conversation'>> = (ctx) => runConversation(ctx);

/**
 * The growth factor of an unset `ttftGrowth`: 2, below any conversation of 3 rounds or more (a wait proportional to
 * the context passes 2× at round 3); 1.5 for 2 rounds, whose last round can reach only about 2×.
 */
export const CONVERSATION_GROWTH_DEFAULT = { factor: 2, twoRounds: 1.5 } as const;

export function growthFactor(probe: Pick<ProbeOf<'conversation'>, 'rounds' | 'ttftGrowth'>): number {
  return (
    probe.ttftGrowth ??
    (probe.rounds > 2 ? CONVERSATION_GROWTH_DEFAULT.factor : CONVERSATION_GROWTH_DEFAULT.twoRounds)
  );
}

export async function runConversation(ctx: Ctx, rng: Rng = cryptoRng): Promise<ProbeOutcome> {
  const { rounds, roundTokens, maxTokens, ttftGrowthFloor } = ctx.probe;
  const ttftGrowth = growthFactor(ctx.probe);
  const messages: Message[] = [];
  const timings: RoundTiming[] = [];
  let firstTtft: number | undefined;
  let last: Awaited<ReturnType<typeof runChatStream>> | undefined;
  let tokens = 0;
  for (let round = 1; round <= rounds; round++) {
    const turn = roundTurn(round, roundTokens, rng);
    messages.push({ role: 'user', content: turn.content });
    ctx.progress.step = `round ${round} of ${rounds}`;
    const sentAt = ctx.progress.elapsed();
    const s = await runChatStream(ctx, { messages: [...messages] });
    last = s;
    tokens += s.tokens;
    const ttftMs = s.firstTokenAt !== undefined ? s.firstTokenAt - sentAt : undefined;
    timings.push({
      round,
      ...(ttftMs !== undefined ? { ttftMs } : {}),
      ...(s.promptTokens !== undefined ? { promptTokens: s.promptTokens } : {}),
    });
    const detail = { rounds: timings };
    // The run's TTFT (probe_ttft_seconds, the slow diagnosis) is round 1's: later rounds have their own gauge.
    if (firstTtft !== undefined) ctx.progress.ttftMs = firstTtft;
    else firstTtft = ttftMs;
    const v = judgeReply({ kind: 'echo', prompt: turn.content, expected: turn.expected }, s, maxTokens);
    if (!v.ok)
      throw new ProbeFailure(v.result, `round ${round} of ${rounds}: ${v.message}`, s.status, detail);
    if (round > 1 && ttftMs !== undefined && firstTtft !== undefined) {
      const grown = ttftMs > firstTtft * ttftGrowth && ttftMs - firstTtft > ttftGrowthFloor;
      if (grown) {
        throw new ProbeFailure(
          'bad_response',
          `round ${round} of ${rounds}: time to first token ${Math.round(ttftMs)} ms, ${(ttftMs / Math.max(firstTtft, 1)).toFixed(1)}× round 1's ${Math.round(firstTtft)} ms (over ttftGrowth ${ttftGrowth}) with ${s.promptTokens ?? '?'} prompt tokens on a ${ctx.conn} connection`,
          s.status,
          detail,
        );
      }
    }
    messages.push({ role: 'assistant', content: s.answer });
  }
  ctx.progress.step = undefined;
  return {
    result: 'ok',
    status: last?.status,
    tokens,
    tokensPerSecond: last?.tokensPerSecond,
    detail: { rounds: timings },
  };
}
