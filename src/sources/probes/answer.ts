// Known-answer checking for the canary, long-input and conversation probes: questions whose answer varies per
// run, compared strictly (issue 28): the canonical answer exactly, whitespace and one trailing full stop aside.
// A thinking block is reasoning, not answer, and is set apart; any other text is a wrong answer, quoted. A reply
// cut off at max_tokens is blamed on the settings only when what came so far is a plausible start of the answer.
import { redactor } from '../../lib/redact.js';
import { runawayOf } from './runaway.js';

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

/**
 * The answer as compared: surrounding whitespace and one trailing full stop dropped, inner whitespace runs as one
 * space. Nothing else is forgiven — "6912!!!!", "**6912**" and "The answer is 6912" are not the answer.
 */
export function normalizeAnswer(s: string): string {
  return s.trim().replace(/\.$/, '').trim().replace(/\s+/g, ' ');
}

/**
 * A number in canonical digits (a leading minus kept, leading zeros dropped), or undefined when the text is not
 * exactly one integer: thousands separators and prose around it make it another text.
 */
export function canonicalNumber(s: string): string | undefined {
  const t = normalizeAnswer(s);
  if (/^-?\d+$/.test(t)) return t.replace(/^(-?)0+(?=\d)/, '$1');
  return undefined;
}

/** The one number in a text, separators dropped ("The answer is 7,748." → 7748); undefined for none or several. */
function soleNumber(text: string): string | undefined {
  const numbers = text.match(/-?\d(?:[\d,\u00a0\u202f _'.]*\d)?/g) ?? [];
  return numbers.length === 1 ? numbers[0]!.replace(/[^\d-]/g, '').replace(/^(-?)0+(?=\d)/, '$1') : undefined;
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
    kind === 'arithmetic' ? canonicalNumber(answer) === expected : normalizeAnswer(answer) === expected;
  if (matches(q.expected, q.kind)) return { ok: true };
  // The answer is wrong whatever wraps it; a mix-up is named leniently, for its cause: another request's answer in
  // any wrapping ("The answer is 7,748.") still points at a cross-request KV mix-up.
  const loose = soleNumber(answer);
  const mixup = others.find(
    (o) =>
      o !== q.expected && (canonicalNumber(answer) === o || normalizeAnswer(answer) === o || loose === o),
  );
  return mixup === undefined
    ? { ok: false, reason: 'wrong', actual }
    : { ok: false, reason: 'wrong', actual, mixup };
}

/**
 * Whether text reads as a model's words rather than garbage from broken decoding: letters, digits, spaces and
 * ordinary punctuation make nearly all of it, no replacement characters, and no single word fills most of it.
 */
export function plausibleText(text: string): boolean {
  const t = text.trim();
  if (t === '' || t.includes('\uFFFD')) return false;
  const chars = Array.from(t);
  const ordinary = chars.filter((c) => /[\p{L}\p{N}\s.,;:!?'"()\-+=*/]/u.test(c)).length;
  if (ordinary < chars.length * 0.9) return false;
  const words = t.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  if (words.length === 0) return false;
  if (words.length >= 8) {
    const counts = new Map<string, number>();
    for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
    if (Math.max(...counts.values()) > words.length / 2) return false;
  }
  return true;
}

/** What a streamed or JSON reply carried, as the judge needs it (a ChatStreamSummary fits). */
export interface Reply {
  /** delta.content / message.content. */
  answer: string;
  /** reasoning / reasoning_content (a reasoning parser's output). */
  reasoning: string;
  finishReason: string;
  /** Reasoning came after answer text (./chat-stream.ts). */
  reasoningAfterAnswer?: boolean;
}

export type Verdict =
  | { ok: true }
  | {
      ok: false;
      result: 'wrong_output' | 'bad_response' | 'reasoning_runaway';
      message: string;
      actual: string;
      mixup?: string;
    };

const quote = (t: string) => JSON.stringify(redactor.clip(t.trim(), 120));

/**
 * Judges a reply to a known-answer question: the answer, or `wrong_output` quoting the text that came instead
 * (in content, or in reasoning when content is empty), or `bad_response` naming a setting when the reply was cut
 * at max_tokens while what came is a plausible start: thinking in words, or a prefix of the expected answer; or
 * `reasoning_runaway` when the model does not stop thinking (./runaway.ts), right answer or not: no setting ends it.
 */
export function judgeReply(q: Question, r: Reply, maxTokens: number, others: string[] = []): Verdict {
  const asked = JSON.stringify(q.prompt.length > 80 ? `…${q.prompt.slice(-60)}` : q.prompt);
  const runaway = runawayOf(r);
  if (runaway !== undefined) {
    return {
      ok: false,
      result: 'reasoning_runaway',
      message: `runaway reasoning on ${asked}: ${runaway} (the model or its chat template loops; more max_tokens would not end it)`,
      actual: redactor.clip(r.answer.trim() || r.reasoning.trim(), 200),
    };
  }
  const check = checkAnswer(q, r.answer, others);
  if (check.ok) return check;
  const cut = r.finishReason === 'length';
  const setting = (what: string): Verdict => ({
    ok: false,
    result: 'bad_response',
    message: `no answer to ${asked} within max_tokens ${maxTokens} (finish_reason length, ${what}): raise maxTokens or turn thinking off`,
    actual: check.actual,
  });
  const wrong = (text: string, where: string, extra = ''): Verdict => ({
    ok: false,
    result: 'wrong_output',
    message: `wrong answer to ${asked}: expected ${JSON.stringify(q.expected)}, got ${quote(text)}${where}${extra}`,
    actual: redactor.clip(text.trim(), 200),
    ...(check.mixup !== undefined ? { mixup: check.mixup } : {}),
  });
  if (check.reason === 'unfinished_thinking') {
    const thinking = r.answer.slice(r.answer.search(/<think>/i) + 7);
    return cut && plausibleText(thinking)
      ? setting('still thinking')
      : wrong(thinking, ' in an unclosed thinking block');
  }
  const answer = extractAnswer(r.answer).answer;
  if (answer === '') {
    const reasoning = r.reasoning.trim();
    if (reasoning === '') return cut ? setting('no text at all') : wrong('', ' (empty content)');
    if (cut && plausibleText(reasoning)) return setting('still thinking');
    return wrong(reasoning, ' in reasoning_content with empty content');
  }
  // Cut off part-way into the right answer: too few tokens, not a wrong answer.
  const said = normalizeAnswer(answer);
  if (cut && said.length < q.expected.length && q.expected.startsWith(said))
    return setting('a start of the answer');
  const why =
    check.mixup !== undefined
      ? ': the answer of the other request running at the same time (cross-request mix-up)'
      : '';
  return wrong(answer, '', why);
}
