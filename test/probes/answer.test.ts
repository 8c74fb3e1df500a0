// Known-answer checking (issue 28): the canonical answer exactly, whitespace and one trailing full stop aside;
// thinking blocks are reasoning and set apart; anything else is a wrong answer, quoted.
import { describe, expect, it } from 'vitest';
import {
  arithmeticQuestion,
  canonicalNumber,
  checkAnswer,
  echoQuestion,
  extractAnswer,
  judgeReply,
  plausibleText,
  type Question,
} from '../../src/sources/probes/answer.js';

/** A deterministic rng (mulberry32) so the generated questions are the same every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sum: Question = {
  kind: 'arithmetic',
  prompt: 'What is 4817 + 2931? Reply with the number only.',
  expected: '7748',
};
const echo: Question = { kind: 'echo', prompt: 'Repeat exactly: QX7-19AF', expected: 'QX7-19AF' };

describe('question generation', () => {
  it('arithmetic questions carry their sum; operands vary per run', () => {
    const rng = seeded(1);
    const qs = Array.from({ length: 50 }, () => arithmeticQuestion(rng));
    for (const q of qs) {
      const [, a, b] = /What is (\d+) \+ (\d+)\?/.exec(q.prompt)!;
      expect(q.expected).toBe(String(Number(a) + Number(b)));
    }
    expect(new Set(qs.map((q) => q.prompt)).size).toBeGreaterThan(45);
  });

  it('echo nonces vary and avoid look-alike characters', () => {
    const rng = seeded(2);
    const qs = Array.from({ length: 50 }, () => echoQuestion(rng));
    expect(new Set(qs.map((q) => q.expected)).size).toBe(50);
    for (const q of qs) {
      expect(q.expected).toMatch(/^[A-HJ-NP-Z2-9]{3}-[A-HJ-NP-Z2-9]{4}$/);
      expect(q.prompt).toBe(`Repeat exactly: ${q.expected}`);
    }
  });
});

describe('answer checking', () => {
  it.each([
    ['7748', 'exact'],
    ['  7748\n', 'whitespace'],
    ['7748.', 'one trailing full stop'],
    ['<think>4817 + 2931: 7000 + 700 + 48</think>\n\n7748', 'a thinking block'],
    ['The user wants a sum. 4817+2931=7748 so\n</think>\n7748.', 'a block opened by the template'],
    [
      '<|channel|>analysis<|message|>Add them.<|end|><|start|>assistant<|channel|>final<|message|>7748<|return|>',
      'a harmony analysis channel',
    ],
  ])('accepts %j (%s)', (text) => {
    expect(checkAnswer(sum, text)).toEqual({ ok: true });
  });

  it.each([
    ['7749', 'one off'],
    ['7738', 'a digit swapped'],
    ['77480', 'an extra digit'],
    ['774', 'a digit missing'],
    ['7748!', 'a trailing exclamation mark'],
    ['6912!!!!', 'exclamation marks'],
    ['7748..', 'two full stops'],
    ['**7748**', 'bold'],
    ['`7748`', 'code'],
    ['7,748', 'a thousands separator'],
    ['7 748', 'a space in the number'],
    ['The answer is 7748.', 'a sentence around it'],
    ['4817 + 2931 = 7748', 'the sum written out'],
    ['7748.5', 'a fraction'],
    ['7748 or 7749', 'two numbers'],
    ['<think>7748</think>7749', 'right in the thinking, wrong in the answer'],
    ['', 'nothing'],
  ])('rejects %j (%s)', (text) => {
    expect(checkAnswer(sum, text)).toMatchObject({ ok: false, reason: 'wrong' });
  });

  it('echo is exact: case, a neighbouring letter, a dropped hyphen, quotes or a repeat fail', () => {
    expect(checkAnswer(echo, 'QX7-19AF')).toEqual({ ok: true });
    expect(checkAnswer(echo, ' QX7-19AF.\n')).toEqual({ ok: true });
    expect(checkAnswer(echo, '<think>echo it</think> QX7-19AF')).toEqual({ ok: true });
    for (const wrong of ['QX7-19AG', 'qx7-19af', 'QX719AF', 'QX7-19A', 'QX7-19AF QX7-19AF', '"QX7-19AF"']) {
      expect(checkAnswer(echo, wrong)).toMatchObject({ ok: false, reason: 'wrong', actual: wrong });
    }
  });

  it("another concurrent request's answer is named as a mix-up", () => {
    expect(checkAnswer(echo, 'ZK4-88PQ', ['QX7-19AF', 'ZK4-88PQ'])).toEqual({
      ok: false,
      reason: 'wrong',
      actual: 'ZK4-88PQ',
      mixup: 'ZK4-88PQ',
    });
    expect(checkAnswer(sum, '9001.', ['7748', '9001'])).toMatchObject({ mixup: '9001' });
    // A wrong answer that is nobody's is not a mix-up.
    expect(checkAnswer(sum, '7749', ['7748', '9001'])).not.toHaveProperty('mixup');
  });

  it('an answer cut off inside a thinking block is unfinished, not wrong', () => {
    expect(checkAnswer(sum, '<think>Let me add 4817 and')).toMatchObject({
      ok: false,
      reason: 'unfinished_thinking',
    });
    expect(extractAnswer('<think>a</think>b<think>c')).toEqual({ answer: 'b', unfinishedThinking: true });
  });

  it('canonicalNumber keeps a leading minus and drops leading zeros, and takes no separators', () => {
    expect(canonicalNumber('-1234')).toBe('-1234');
    expect(canonicalNumber('007748')).toBe('7748');
    expect(canonicalNumber('-1,234')).toBeUndefined();
    expect(canonicalNumber('12,34,567')).toBeUndefined();
  });
});

describe('judging a reply (content, reasoning, finish_reason)', () => {
  const reply = (answer: string, reasoning = '', finishReason = 'stop') => ({
    answer,
    reasoning,
    finishReason,
  });

  it('the right answer passes, with or without reasoning beside it', () => {
    expect(judgeReply(sum, reply('7748'), 8)).toEqual({ ok: true });
    expect(judgeReply(sum, reply('7748.', 'Adding the two numbers.'), 8)).toEqual({ ok: true });
  });

  it('other text in content is wrong_output and quoted', () => {
    const v = judgeReply(sum, reply('6912!!!!'), 8);
    expect(v).toMatchObject({ ok: false, result: 'wrong_output', actual: '6912!!!!' });
    expect(v.ok === false && v.message).toBe(
      'wrong answer to "What is 4817 + 2931? Reply with the number only.": expected "7748", got "6912!!!!"',
    );
  });

  it('empty content with garbage in reasoning is wrong_output quoting the reasoning, cut or not', () => {
    for (const finish of ['length', 'stop']) {
      const v = judgeReply(sum, reply('', 'Ġ\uFFFD#@ĊĊ}{%$', finish), 8);
      expect(v).toMatchObject({ ok: false, result: 'wrong_output' });
      expect(v.ok === false && v.message).toContain('in reasoning_content with empty content');
    }
  });

  it('a cut at max_tokens is the setting only while what came is a plausible start', () => {
    // Thinking in words, cut: raise maxTokens.
    expect(
      judgeReply(sum, reply('', 'The user asks for the sum of two numbers, so I', 'length'), 8),
    ).toMatchObject({
      ok: false,
      result: 'bad_response',
    });
    expect(judgeReply(sum, reply('<think>Let me add 4817 and', '', 'length'), 8)).toMatchObject({
      result: 'bad_response',
    });
    // A start of the answer, cut: the setting too.
    expect(judgeReply(sum, reply('77', '', 'length'), 1)).toMatchObject({ result: 'bad_response' });
    // Not a start of the answer: wrong, whatever finish_reason says.
    expect(judgeReply(sum, reply('69', '', 'length'), 1)).toMatchObject({ result: 'wrong_output' });
    // Reasoning that finished (stop) with no answer is no setting problem.
    expect(judgeReply(sum, reply('', 'The user asks for a sum.', 'stop'), 8)).toMatchObject({
      result: 'wrong_output',
    });
  });

  it('plausibleText tells words from garbage', () => {
    expect(plausibleText('Okay, the user wants 4817 + 2931; let me add them.')).toBe(true);
    expect(plausibleText('Ġ\uFFFD#@ĊĊ}{%$')).toBe(false);
    expect(plausibleText('ok ok ok ok ok ok ok ok ok ok')).toBe(false);
    expect(plausibleText('')).toBe(false);
  });
});
