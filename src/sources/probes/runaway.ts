// Runaway reasoning: a model that does not stop thinking, told apart from one that needs more tokens. A reply cut
// at max_tokens while a thinking model is still thinking in words is a setting (maxTokens too small for it); a
// reply that keeps closing its thinking (`</think>` again and again), goes back to thinking once it has answered,
// or repeats one phrase until max_tokens is the model or its chat template looping, and no token budget ends it.
// Only the probes' own questions are judged (a few tokens of known answer), so nothing here sees user traffic.
import { redactor } from '../../lib/redact.js';

/** What the judge needs of a reply (a ChatStreamSummary fits). */
export interface RunawayReply {
  answer: string;
  reasoning: string;
  finishReason: string;
  reasoningAfterAnswer?: boolean;
}

/** Words looked at from the end of a text: a loop long enough to name fits in them; memory stays small. */
const TAIL_WORDS = 96;
/** The longest repeated unit looked for, in words. */
const MAX_UNIT = 16;
/** Repeats of the unit that make a loop. */
const MIN_REPEATS = 3;

/**
 * The unit a text ends by repeating, when its tail is one phrase said MIN_REPEATS or more times and the repeats make
 * at least half of the words looked at; undefined otherwise. Broken decoding (replacement characters) is garbage,
 * not a loop (the wrong-output check names it).
 */
export function loopUnit(text: string): { unit: string; repeats: number } | undefined {
  if (text.includes('\uFFFD')) return undefined;
  const words = (text.match(/\S+/g) ?? []).slice(-TAIL_WORDS);
  for (let p = 1; p <= MAX_UNIT; p++) {
    let n = p;
    while (n < words.length && words[words.length - 1 - n] === words[words.length - 1 - n + p]) n++;
    const repeats = Math.floor(n / p);
    if (repeats >= MIN_REPEATS && n * 2 >= words.length)
      return { unit: words.slice(words.length - p).join(' '), repeats };
  }
  return undefined;
}

const CLOSE = /<\/think>/gi;

/** Why the reply is a runaway, or undefined when it is not one. */
export function runawayOf(r: RunawayReply): string | undefined {
  const closes = r.answer.match(CLOSE)?.length ?? 0;
  if (closes >= 2) return `\`</think>\` ${closes} times in content`;
  if (r.finishReason !== 'length') return undefined;
  if (r.reasoningAfterAnswer === true)
    return 'reasoning went on after the answer until max_tokens (finish_reason length)';
  const open = r.answer.search(/<think>/i);
  for (const [where, text] of [
    ['reasoning', r.reasoning],
    ['the thinking block', open === -1 ? '' : r.answer.slice(open + 7)],
  ] as const) {
    const loop = loopUnit(text);
    if (loop !== undefined)
      return `${where} repeats ${JSON.stringify(redactor.clip(loop.unit, 60))} ${loop.repeats} times until max_tokens (finish_reason length)`;
  }
  return undefined;
}
