// canary: questions with a known answer that changes every run (a sum of random operands, the echo of a random
// nonce), at temperature 0 with a few tokens. A deployment can be up, fast and wrong — a KV transfer that
// delivers another request's blocks answers 200 with garbage — and only checking the answer shows it.
// Every `pairEvery`-th run asks two questions at once over two connections: a reply carrying the other
// request's answer is a cross-request mix-up, named as such.
import { randomInt } from 'node:crypto';
import type { ProbeOf } from '../../config/schema.js';
import type { AnswerCheck } from '../../core/signals.js';
import {
  judgeReply,
  makeQuestion,
  type Question,
  type QuestionKind,
  type Rng,
  type Verdict,
} from './answer.js';
import { runChatStream, type ChatStreamSummary } from './chat-stream.js';
import { ProbeFailure, type ProbeContext, type ProbeFn, type ProbeOutcome } from './types.js';
import { redactor } from '../../lib/redact.js';

type Ctx = ProbeContext<ProbeOf<'canary'>>;

/** Uniform in [0, 1) from the CSPRNG: operands and nonces must not repeat across restarts. */
const cryptoRng: Rng = () => randomInt(0, 2 ** 31) / 2 ** 31;

/** Runs per probe config (a reload makes a new config object, and the count starts again). */
const runCounts = new WeakMap<object, number>();

interface Asked {
  q: Question;
  s: ChatStreamSummary;
}

export const canaryProbe: ProbeFn<ProbeOf<'canary'>> = (ctx) => runCanary(ctx);

export async function runCanary(ctx: Ctx, rng: Rng = cryptoRng): Promise<ProbeOutcome> {
  const { questions, pairEvery } = ctx.probe;
  const run = runCounts.get(ctx.probe) ?? 0;
  runCounts.set(ctx.probe, run + 1);
  const first = makeQuestion(questions[run % questions.length] as QuestionKind, rng);
  const pair = pairEvery > 0 && run % pairEvery === pairEvery - 1;
  const ask = (q: Question, c: Ctx): Promise<Asked> =>
    runChatStream(c, { messages: [{ role: 'user', content: q.prompt }] }).then((s) => ({ q, s }));

  let asked: Asked[];
  if (pair) {
    // Two of the same kind: the other request's answer is then a plausible wrong answer, not noise.
    let second = makeQuestion(first.kind, rng);
    while (second.expected === first.expected) second = makeQuestion(first.kind, rng);
    asked = await Promise.all([ask(first, ctx), ask(second, { ...ctx, lease: ctx.extraLease() })]);
  } else {
    asked = [await ask(first, ctx)];
  }

  const answers: AnswerCheck[] = [];
  let wrong: { a: AnswerCheck; v: Exclude<Verdict, { ok: true }>; status: number } | undefined;
  let unfinished: { v: Exclude<Verdict, { ok: true }>; status: number } | undefined;
  for (const { q, s } of asked) {
    const others = asked.filter((x) => x.q !== q).map((x) => x.q.expected);
    const v = judgeReply(q, s, ctx.probe.maxTokens, others);
    const a: AnswerCheck = {
      question: q.prompt,
      expected: q.expected,
      actual: v.ok ? redactor.clip(s.answer.trim(), 200) : v.actual,
      ok: v.ok,
      ...(s.engineTokens !== undefined ? { tokens: s.engineTokens } : {}),
    };
    if (!v.ok && v.mixup !== undefined) a.mixup = v.mixup;
    answers.push(a);
    if (v.ok) continue;
    // No answer within max_tokens is a setting problem (a thinking model needs more), not a wrong answer; a runaway
    // is the model's, and neither is a wrong answer.
    if (v.result === 'bad_response' || v.result === 'reasoning_runaway')
      unfinished ??= { v, status: s.status };
    else if (wrong === undefined || (a.mixup !== undefined && wrong.a.mixup === undefined)) {
      // A mix-up names its cause; it is the one worth quoting.
      wrong = { a, v, status: s.status };
    }
  }
  const detail = { answers };
  if (wrong) throw new ProbeFailure('wrong_output', wrong.v.message, wrong.status, detail);
  if (unfinished)
    throw new ProbeFailure(unfinished.v.result, unfinished.v.message, unfinished.status, detail);
  const tokens = asked.reduce((n, x) => n + x.s.tokens, 0);
  return {
    result: 'ok',
    status: asked[0]!.s.status,
    tokens,
    tokensPerSecond: asked[0]!.s.tokensPerSecond,
    detail,
  };
}
