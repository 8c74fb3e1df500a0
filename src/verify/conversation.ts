// conversation: S sessions × k rounds, the shape of an agent harness. Each session keeps one keep-alive
// connection (one undici Client) through --url, the outermost hop, and every round resends the whole history
// plus a new user turn, so the context grows round by round. TTFT per round must stay within a bound of round
// 1's (a reused connection whose first-token time grows with the context is the harness hang that one-shot
// loads over fresh connections never reproduce); a request that fails or hangs fails the step, naming its round.
// The whole conversation must fit the context one request can use: the tokens each round adds default to 512, or
// fewer when the server reports a context that k rounds of 512 would overrun (llama.cpp reports its per-slot
// context, the -c total over --parallel slots: server-info.ts cites the source), so the step measures TTFT growth,
// not the server's HTTP 400 for a request past its context.
import { randomBytes } from 'node:crypto';
import { Client } from '../lib/http/undici.js';
import { reconnectedNote, streamChat, type StreamResult } from './load-client.js';
import { promptOfTokens } from './prompt-text.js';
import { fitToSlots, readServerInfo, type Reported } from './server-info.js';
import { medianOf } from './level-figures.js';
import { secs } from './stats.js';
import type { Target } from './target.js';
import { durationKnob, intKnob, maxTokensKnob, ratioKnob, timeoutKnob } from './knob-specs.js';
import { defineStep } from './types.js';

export interface ConversationKnobs {
  /** Concurrent sessions; 0 = DEFAULT_SESSIONS, or the server's slots when fewer. */
  sessions: number;
  rounds: number;
  /** Tokens of the new user turn each round adds; 0 = DEFAULT_GROW_TOKENS, or what fits the reported context. */
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
  run: string,
  session: number,
  onRound: (round: number, r: StreamResult) => void,
): Promise<ConversationFailure | undefined> {
  const client = new Client(target.origin, { pipelining: 1, keepAliveTimeout: 60_000 });
  const history: Message[] = [];
  try {
    for (let round = 1; round <= k.rounds; round++) {
      history.push({
        role: 'user',
        // The run's mark first: an earlier run's identical conversation left in the server's prompt cache would
        // make round 1 a cache hit (llama.cpp 80fb11a: round 1 ~0.06 s against ~0.16 s cold) and the bound 3×
        // a cache hit; each round after it reuses this run's own prefix, as a client's conversation does.
        content: `${round === 1 ? `Conversation ${run}-${session}. ` : ''}Round ${round} of session ${session}. ${promptOfTokens(k.growTokens)}`,
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

/**
 * Sessions when neither the flag nor the server's slots say otherwise. More sessions than slots would measure the
 * queue: on llama.cpp 80fb11a with --parallel 2, 4 sessions made every round after the first wait for another
 * session's whole request (round 1: two waited, two did not), so TTFT grew with the other session's decode time and
 * the bound failed under load (round 5 1.29 s > 1.16 s) on a server whose prefill grew 56 → 136 ms over 8 rounds.
 */
export const DEFAULT_SESSIONS = 4;

/** Tokens a round adds when neither the flag nor the server's context says otherwise. */
export const DEFAULT_GROW_TOKENS = 512;
/**
 * A round's tokens beyond its user text and reply: the chat template's role markers and the "Round r of session s."
 * prefix (16 measured on llama.cpp 80fb11a with the Qwen2.5 template: 8 rounds of 512 + 32 asked 4,483 tokens), with
 * room for a reply that tokenizes longer when sent back than when it was generated.
 */
export const ROUND_OVERHEAD_TOKENS = 48;
/** The share of the reported context the last round may use (long-context uses the same 90 %). */
const CONTEXT_SHARE = 0.9;
/** The fewest tokens a round adds when the context is small: below this TTFT growth is within noise. */
export const MIN_GROW_TOKENS = 16;

/**
 * The tokens each round adds, and where that came from: the flag; else DEFAULT_GROW_TOKENS, or less when the
 * reported context cannot hold k rounds of it (each round's user text, reply and overhead within 90 % of it).
 */
export function growTokens(
  k: Pick<ConversationKnobs, 'growTokens' | 'rounds' | 'maxTokens'>,
  reported: Reported | undefined,
): { tokens: number; source: string } {
  if (k.growTokens > 0) return { tokens: k.growTokens, source: '--conversation.grow-tokens' };
  if (!reported)
    return { tokens: DEFAULT_GROW_TOKENS, source: 'default (the server reports no context length)' };
  const fit = Math.floor((reported.value * CONTEXT_SHARE) / k.rounds) - k.maxTokens - ROUND_OVERHEAD_TOKENS;
  if (fit >= DEFAULT_GROW_TOKENS)
    return { tokens: DEFAULT_GROW_TOKENS, source: `default (fits ${reported.source} ${reported.value})` };
  return {
    tokens: Math.max(MIN_GROW_TOKENS, fit),
    source: `${k.rounds} rounds within 90% of ${reported.source} ${reported.value}`,
  };
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
    sessions: intKnob(
      'sessions',
      0,
      `concurrent sessions, one connection each (default ${DEFAULT_SESSIONS}, or the server's slot count when fewer)`,
    ),
    rounds: intKnob('rounds', 8, 'rounds per session'),
    growTokens: intKnob(
      'grow-tokens',
      0,
      `tokens each round adds to the context (default ${DEFAULT_GROW_TOKENS}, or fewer to fit the context the server reports)`,
    ),
    maxTokens: maxTokensKnob(32, 'per reply'),
    ttftRatio: ratioKnob('ttft-ratio', 3, "a round's median TTFT may be this × round 1's"),
    ttftFloorMs: durationKnob('ttft-floor', 250, '... plus this much'),
    timeoutMs: timeoutKnob(30_000, 'limit per request (a hang fails its round)'),
  },
  async run(ctx, knobs) {
    const info = knobs.growTokens > 0 && knobs.sessions > 0 ? {} : await readServerInfo(ctx.target);
    const grow = growTokens(knobs, knobs.growTokens > 0 ? undefined : info.context);
    const sessions = fitToSlots(
      { value: knobs.sessions, name: '--conversation.sessions' },
      DEFAULT_SESSIONS,
      info.slots,
    );
    const k = { ...knobs, growTokens: grow.tokens, sessions: sessions.n };
    ctx.progress(
      `${k.sessions} sessions (${sessions.source}) x ${k.rounds} rounds of ~${k.growTokens} tokens each (${grow.source})`,
    );
    const run = randomBytes(4).toString('hex');
    const perRound = Array.from({ length: k.rounds }, () => [] as StreamResult[]);
    const failures = (
      await Promise.all(
        Array.from({ length: k.sessions }, (_, i) =>
          runSession(ctx.target, k, run, i + 1, (round, r) => perRound[round - 1]!.push(r)),
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
        `${k.sessions} sessions (${sessions.source}) x ${k.rounds} rounds of ~${k.growTokens} tokens (${grow.source})`,
        ...rounds.map(
          (r) =>
            `round ${r.round}: ~${r.contextTokens} tokens | ttft p50=${secs(r.ttftP50Ms)} min=${secs(r.ttftMinMs)} max=${secs(r.ttftMaxMs)} | ${r.completed}/${k.sessions}`,
        ),
        ...failures.map((f) => `session ${f.session} round ${f.round}: ${f.error}`),
        ...reconnectedNote(perRound.flat()),
      ],
      figures: {},
      data: { rounds, failures, growth, growTokens: grow, sessions },
      saved: { rounds, failures, boundRatio: k.ttftRatio, boundFloorMs: k.ttftFloorMs },
    };
  },
});
