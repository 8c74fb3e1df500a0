// conversation: S sessions × k rounds, the shape of an agent harness. Each session keeps one keep-alive
// connection (one undici Client) through --url, the outermost hop, and every round resends the whole history
// plus a new user turn, so the context grows round by round. TTFT per round must stay within a bound of round
// 1's (a reused connection whose first-token time grows with the context is the harness hang that one-shot
// loads over fresh connections never reproduce); a request that fails or hangs fails the step, naming its round.
import { Client } from '../lib/http/undici.js';
import { reconnectedNote, streamChat, type StreamResult } from './load-client.js';
import { promptOfTokens } from './prompt-text.js';
import { medianOf } from './level-figures.js';
import { secs } from './stats.js';
import type { Target } from './target.js';
import { durationKnob, intKnob, maxTokensKnob, ratioKnob, timeoutKnob } from './knob-specs.js';
import { defineStep } from './types.js';

export interface ConversationKnobs {
  sessions: number;
  rounds: number;
  /** Tokens of the new user turn each round adds. */
  growTokens: number;
  maxTokens: number;
  /** Round r's median TTFT may be at most ttftRatio × round 1's + ttftFloorMs. */
  ttftRatio: number;
  ttftFloorMs: number;
  timeoutMs: number;
}

export interface RoundFigures {
  round: number;
  /** Prompt tokens the server counted (median over sessions), or the estimate when it sent no usage. */
  contextTokens: number;
  ttftP50Ms: number;
  ttftMinMs: number;
  ttftMaxMs: number;
  completed: number;
}

export interface ConversationFailure {
  session: number;
  round: number;
  error: string;
}

type Message = { role: 'user' | 'assistant'; content: string };

async function runSession(
  target: Target,
  k: ConversationKnobs,
  session: number,
  onRound: (round: number, r: StreamResult) => void,
): Promise<ConversationFailure | undefined> {
  const client = new Client(target.origin, { pipelining: 1, keepAliveTimeout: 60_000 });
  const history: Message[] = [];
  try {
    for (let round = 1; round <= k.rounds; round++) {
      history.push({
        role: 'user',
        content: `Round ${round} of session ${session}. ${promptOfTokens(k.growTokens)}`,
      });
      // The reply goes back into the next round: collected within the answer's bounds, like every answer.
      const r = await streamChat(client, target, {
        messages: history,
        maxTokens: k.maxTokens,
        timeoutMs: k.timeoutMs,
        extra: { temperature: 0 },
        collect: true,
      });
      const { turn, ...kept } = r;
      onRound(round, kept);
      if (!r.ok) return { session, round, error: r.error ?? 'failed' };
      history.push({ role: 'assistant', content: turn?.content ?? '' });
    }
    return undefined;
  } finally {
    await client.destroy().catch(() => {});
  }
}

/** The first round (after round 1) whose median TTFT exceeds the bound, with the bound. */
export function ttftGrowth(
  rounds: readonly RoundFigures[],
  ratio: number,
  floorMs: number,
): { round: RoundFigures; boundMs: number } | undefined {
  const first = rounds.find((r) => r.round === 1);
  if (!first || !Number.isFinite(first.ttftP50Ms)) return undefined;
  const boundMs = ratio * first.ttftP50Ms + floorMs;
  const over = rounds.find((r) => r.round > 1 && r.ttftP50Ms > boundMs);
  return over ? { round: over, boundMs } : undefined;
}

export const conversationStep = defineStep<ConversationKnobs>({
  name: 'conversation',
  flagPrefix: 'conversation',
  summary:
    'S sessions x k rounds of a growing conversation, one keep-alive connection per session: TTFT per round within a bound of round 1',
  knobs: {
    sessions: intKnob('sessions', 4, 'concurrent sessions (one connection each)'),
    rounds: intKnob('rounds', 8, 'rounds per session'),
    growTokens: intKnob('grow-tokens', 512, 'tokens each round adds to the context'),
    maxTokens: maxTokensKnob(32, 'per reply'),
    ttftRatio: ratioKnob('ttft-ratio', 3, "a round's median TTFT may be this × round 1's"),
    ttftFloorMs: durationKnob('ttft-floor', 250, '... plus this much'),
    timeoutMs: timeoutKnob(30_000, 'limit per request (a hang fails its round)'),
  },
  async run(ctx, k) {
    const perRound = Array.from({ length: k.rounds }, () => [] as StreamResult[]);
    const failures = (
      await Promise.all(
        Array.from({ length: k.sessions }, (_, i) =>
          runSession(ctx.target, k, i + 1, (round, r) => perRound[round - 1]!.push(r)),
        ),
      )
    ).filter((f): f is ConversationFailure => f !== undefined);
    const rounds: RoundFigures[] = perRound.map((results, i) => {
      const ttft = results.filter((r) => r.ok).map((r) => r.ttftMs);
      const prompt = results.map((r) => r.promptTokens).filter((n): n is number => n !== undefined);
      return {
        round: i + 1,
        contextTokens: prompt.length ? medianOf(prompt) : (i + 1) * (k.growTokens + k.maxTokens),
        ttftP50Ms: medianOf(ttft),
        ttftMinMs: ttft.length ? Math.min(...ttft) : NaN,
        ttftMaxMs: ttft.length ? Math.max(...ttft) : NaN,
        completed: ttft.length,
      };
    });
    for (const r of rounds)
      ctx.progress(
        `round ${r.round}: ~${r.contextTokens} context tokens, ttft p50=${secs(r.ttftP50Ms)} (min ${secs(r.ttftMinMs)}, max ${secs(r.ttftMaxMs)}), ${r.completed}/${k.sessions} completed`,
      );
    const growth = ttftGrowth(rounds, k.ttftRatio, k.ttftFloorMs);
    failures.sort((a, b) => a.round - b.round || a.session - b.session);
    const first = failures[0];
    const bound = `${k.ttftRatio}x round 1 + ${secs(k.ttftFloorMs)}`;
    const summary = first
      ? `round ${first.round} failed (session ${first.session}: ${first.error})` +
        (failures.length > 1 ? `; ${failures.length} sessions failed` : '')
      : growth
        ? `TTFT grows with the context: round ${growth.round.round} median ${secs(growth.round.ttftP50Ms)} > bound ${secs(growth.boundMs)} (${bound}) at ~${growth.round.contextTokens} tokens`
        : `${k.sessions} sessions x ${k.rounds} rounds: TTFT within ${bound} (round 1 ${secs(rounds[0]?.ttftP50Ms ?? NaN)}, round ${k.rounds} ${secs(rounds[k.rounds - 1]?.ttftP50Ms ?? NaN)})`;
    return {
      ok: !first && !growth,
      summary,
      details: [
        ...rounds.map(
          (r) =>
            `round ${r.round}: ~${r.contextTokens} tokens | ttft p50=${secs(r.ttftP50Ms)} min=${secs(r.ttftMinMs)} max=${secs(r.ttftMaxMs)} | ${r.completed}/${k.sessions}`,
        ),
        ...failures.map((f) => `session ${f.session} round ${f.round}: ${f.error}`),
        ...reconnectedNote(perRound.flat()),
      ],
      figures: {},
      data: { rounds, failures, growth },
      saved: { rounds, failures, boundRatio: k.ttftRatio, boundFloorMs: k.ttftFloorMs },
    };
  },
});
