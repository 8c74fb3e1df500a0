// Known-answer checking: tolerant of what models legitimately add, strict about the answer itself.
import { describe, expect, it } from 'vitest';
import {
  arithmeticQuestion,
  canonicalNumber,
  checkAnswer,
  echoQuestion,
  extractAnswer,
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
    ['7748.', 'a trailing full stop'],
    ['7748!', 'a trailing exclamation mark'],
    ['**7748**', 'bold'],
    ['`7748`', 'code'],
    ['7,748', 'a comma thousands separator'],
    ['7 748', 'a space thousands separator'],
    ['7 748', 'a narrow no-break space separator'],
    ['7.748', 'a European thousands separator'],
    ['The answer is 7748.', 'a stated answer'],
    ['4817 + 2931 = 7748', 'the sum written out'],
    ['<think>4817 + 2931: 7000 + 700 + 48</think>\n\n7748', 'a thinking block'],
    ['The user wants a sum. 4817+2931=7748 so\n</think>\n7,748.', 'a block opened by the template'],
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
    ['77,48', 'a separator in the wrong place'],
    ['7748.5', 'a fraction'],
    ['7748 or 7749', 'two numbers'],
    ['<think>7748</think>7749', 'right in the thinking, wrong in the answer'],
    ['', 'nothing'],
  ])('rejects %j (%s)', (text) => {
    expect(checkAnswer(sum, text)).toMatchObject({ ok: false, reason: 'wrong' });
  });

  it('echo is exact up to wrapping: case, a neighbouring letter or a dropped hyphen fail', () => {
    expect(checkAnswer(echo, 'QX7-19AF')).toEqual({ ok: true });
    expect(checkAnswer(echo, '"QX7-19AF".')).toEqual({ ok: true });
    expect(checkAnswer(echo, '<think>echo it</think> QX7-19AF')).toEqual({ ok: true });
    for (const wrong of ['QX7-19AG', 'qx7-19af', 'QX719AF', 'QX7-19A', 'QX7-19AF QX7-19AF']) {
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
    expect(checkAnswer(sum, '9,001', ['7748', '9001'])).toMatchObject({ mixup: '9001' });
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

  it('canonicalNumber keeps a leading minus and drops leading zeros', () => {
    expect(canonicalNumber('-1,234')).toBe('-1234');
    expect(canonicalNumber('007748')).toBe('7748');
    expect(canonicalNumber('12,34,567')).toBeUndefined();
  });
});
