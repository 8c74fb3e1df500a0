// Known-answer checking for the canary probe: questions whose answer varies per run, and a tolerant
// comparison that forgives what models legitimately add (a thinking block, whitespace, a trailing full stop,
// thousands separators, code fences) and nothing else: a wrong-but-close answer is wrong.
import { redactor } from '../../lib/redact.js';

export type QuestionKind = 'arithmetic' | 'echo';

export interface Question {
  kind: QuestionKind;
  prompt: string;
  /** The exact answer, in canonical form (digits only for numbers). */
  expected: string;
}

/** A source of uniform numbers in [0, 1); tests pass a seeded one. */
export type Rng = () => number;

const int = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));

/** Four-digit operands: the sum is never a "famous" number a broken model could produce by luck. */
export function arithmeticQuestion(rng: Rng): Question {
  const a = int(rng, 1000, 9999);
  const b = int(rng, 1000, 9999);
  return {
    kind: 'arithmetic',
    prompt: `What is ${a} + ${b}? Reply with the number only.`,
    expected: String(a + b),
  };
}

// No 0/O or 1/I: a nonce must not be "close" to another reading of itself.
const NONCE_CHARS = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export function nonce(rng: Rng): string {
  const pick = () => NONCE_CHARS[Math.floor(rng() * NONCE_CHARS.length)]!;
  const part = (n: number) => Array.from({ length: n }, pick).join('');
  return `${part(3)}-${part(4)}`;
}

export function echoQuestion(rng: Rng): Question {
  const n = nonce(rng);
  return { kind: 'echo', prompt: `Repeat exactly: ${n}`, expected: n };
}

export function makeQuestion(kind: QuestionKind, rng: Rng): Question {
  return kind === 'arithmetic' ? arithmeticQuestion(rng) : echoQuestion(rng);
}

/**
 * Thinking blocks as reasoning models emit them in `content` when no reasoning parser is set: DeepSeek-R1,
 * Qwen3 and GLM use <think>…</think>; some templates open the block in the prompt so only </think> is seen.
 * gpt-oss harmony without a parser leaves `<|channel|>analysis<|message|>…<|end|>` before the final channel.
 */
const THINK_BLOCK = /<think>[\s\S]*?<\/think>/gi;
const THINK_CLOSE = '</think>';
const HARMONY_FINAL = /<\|channel\|>final<\|message\|>/;

export interface Extracted {
  /** The answer part of the text (thinking removed), trimmed. */
  answer: string;
  /** The text ends inside a thinking block: the answer was never reached (max_tokens too small). */
  unfinishedThinking: boolean;
}

export function extractAnswer(text: string): Extracted {
  let t = text;
  const harmony = HARMONY_FINAL.exec(t);
  if (harmony) t = t.slice(harmony.index + harmony[0].length).replace(/<\|(?:end|return)\|>[\s\S]*$/, '');
  t = t.replace(THINK_BLOCK, '');
  const close = t.lastIndexOf(THINK_CLOSE);
  if (close !== -1) t = t.slice(close + THINK_CLOSE.length);
  const unfinishedThinking =
    /<think>/i.test(t) || (!harmony && /<\|channel\|>analysis/.test(text) && !/<\|end\|>/.test(text));
  if (/<think>/i.test(t)) t = t.slice(0, t.search(/<think>/i));
  return { answer: t.trim(), unfinishedThinking };
}

/** Strips what wraps an answer without changing it: code fences, quotes, bold, a trailing full stop. */
function unwrap(s: string): string {
  let t = s.trim();
  for (let i = 0; i < 4; i++) {
    const before = t;
    t = t.replace(/^```[a-z]*\s*([\s\S]*?)\s*```$/i, '$1').trim();
    t = t.replace(/^(\*\*|__|`|"|'|“|‘)([\s\S]*)(\*\*|__|`|"|'|”|’)$/, '$2').trim();
    t = t.replace(/[.!。]+$/, '').trim();
    if (t === before) break;
  }
  return t;
}

/**
 * A number as written by a model, in canonical digits: "7,748", "7 748", "7_748", "7.748" (a European
 * thousands separator, only in groups of three), "= 7748". Returns undefined when it is not one number.
 */
export function canonicalNumber(s: string): string | undefined {
  // "The answer is 7748", "= 7748" and "4817 + 2931 = 7748" state one number; anything longer does not.
  let t = unwrap(s).replace(/^(?:the answer is|answer:|\d+\s*\+\s*\d+\s*=|=)\s*/i, '');
  t = unwrap(t);
  if (/^-?\d{1,3}(?:[,  _'.]\d{3})+$/.test(t)) return t.replace(/[,  _'.]/g, '');
  if (/^-?\d+$/.test(t)) return t.replace(/^(-?)0+(?=\d)/, '$1');
  return undefined;
}

export type Check =
  { ok: true } | { ok: false; reason: 'wrong' | 'unfinished_thinking'; actual: string; mixup?: string };

/**
 * Checks `text` against a question. `others` are the expected answers of requests that ran at the same time:
 * when the wrong answer is one of them, the reply belongs to another request (a cross-request KV mix-up).
 */
export function checkAnswer(q: Question, text: string, others: string[] = []): Check {
  const { answer, unfinishedThinking } = extractAnswer(text);
  const actual = redactor.clip(answer, 200);
  if (answer === '' && unfinishedThinking) return { ok: false, reason: 'unfinished_thinking', actual };
  const matches = (expected: string, kind: QuestionKind) =>
    kind === 'arithmetic' ? canonicalNumber(answer) === expected : unwrap(answer) === expected;
  if (matches(q.expected, q.kind)) return { ok: true };
  const mixup = others.find(
    (o) => o !== q.expected && (canonicalNumber(answer) === o || unwrap(answer) === o),
  );
  return mixup === undefined
    ? { ok: false, reason: 'wrong', actual }
    : { ok: false, reason: 'wrong', actual, mixup };
}
