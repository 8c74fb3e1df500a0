// Built-in text for the probes that need many prompt tokens (longinput, conversation, the tool-call matrix's
// large-arguments cell): deterministic, so a run's cost is known and a test can bound it, and made of short
// common words, so one word is one token for the byte-level BPE tokenizers of Llama 3, Qwen, DeepSeek and
// Mistral (" the", " and", …) and the estimate `words + full stops` is an upper bound (test/probes/budget.test.ts).
// A run varies it with a nonce at its very start: an engine's prefix cache matches from the first token, so no
// earlier run's KV can serve it.

const WORDS = [
  'the',
  'and',
  'of',
  'to',
  'in',
  'is',
  'it',
  'for',
  'on',
  'was',
  'as',
  'at',
  'by',
  'be',
  'he',
  'we',
  'or',
  'an',
  'are',
  'but',
  'not',
  'you',
  'all',
  'any',
  'can',
  'had',
  'her',
  'one',
  'our',
  'out',
  'day',
  'get',
  'has',
  'him',
  'his',
  'how',
  'man',
  'new',
  'now',
  'old',
  'see',
  'two',
  'way',
  'who',
  'boy',
  'did',
  'its',
  'let',
  'put',
  'say',
  'she',
  'too',
  'use',
  'sun',
  'sea',
  'red',
  'map',
  'box',
  'cup',
  'key',
  'air',
  'arm',
] as const;

/** Words per sentence before its full stop. */
const SENTENCE = 11;

/** About `tokens` tokens of deterministic prose: sentences of eleven short words and a full stop. */
export function fillerText(tokens: number, offset = 0): string {
  const sentences: string[] = [];
  let used = 0;
  let i = offset;
  while (used + SENTENCE + 1 <= tokens) {
    const words: string[] = [];
    for (let w = 0; w < SENTENCE; w++, i++)
      words.push(WORDS[(i * 7 + Math.floor(i / WORDS.length)) % WORDS.length]!);
    const s = words.join(' ');
    sentences.push(s[0]!.toUpperCase() + s.slice(1) + '.');
    used += SENTENCE + 1;
  }
  return sentences.join(' ');
}

/** The estimate fillerText is built to: a word or a full stop a token. */
export function fillerTokens(text: string): number {
  return (text.match(/[a-z]+|\./gi) ?? []).length;
}
