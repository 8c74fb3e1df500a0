// The long-input and conversation probes and the strict structured check, against small servers on 127.0.0.1:
// what they send, what they pass and what they fail with.
import { afterEach, describe, expect, it } from 'vitest';
import { isJsonPrefix } from '../../src/sources/probes/json-prefix.js';
import { fillerText, fillerTokens } from '../../src/sources/probes/prompt-text.js';
import { longPrompt } from '../../src/sources/probes/longinput.js';
import { growthFactor } from '../../src/sources/probes/conversation.js';
import { targetSchema, type ProbeOf } from '../../src/config/schema.js';
import { chunk, sendSse, startServer, usageChunk, type TestServer } from './hostile.js';
import { runOnce } from './fixtures.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Sent {
  messages: { role: string; content: string }[];
  max_tokens: number;
}

/** Echoes the nonce each request asks for, after `delayMs(request)`; or answers `text` when given. */
function echoing(
  opts: { delayMs?: (i: number) => number; text?: (req: Sent) => string; finish?: string } = {},
) {
  let i = 0;
  return startServer((q, res, body) => {
    // A keep-alive run first primes its connection with GET /v1/models.
    if (q.method === 'GET') {
      res.setHeader('content-type', 'application/json');
      res.end('{"object": "list", "data": []}');
      return;
    }
    const req = JSON.parse(body) as Sent;
    const n = i++;
    const last = req.messages[req.messages.length - 1]!.content;
    const text = opts.text?.(req) ?? /Repeat exactly: (\S+)$/.exec(last)?.[1] ?? '?';
    setTimeout(
      () =>
        sendSse(res, [
          chunk({ role: 'assistant', content: '' }),
          chunk({ content: text }),
          chunk({}, opts.finish ?? 'stop'),
          usageChunk(1),
          'data: [DONE]\n\n',
        ]),
      opts.delayMs?.(n) ?? 0,
    );
  });
}

describe('prompt text', () => {
  it('is deterministic, of the asked size, and varied per run only by its nonce', () => {
    expect(fillerText(500)).toBe(fillerText(500));
    expect(fillerTokens(fillerText(500))).toBeLessThanOrEqual(500);
    expect(fillerTokens(fillerText(500))).toBeGreaterThan(480);
    let seed = 0;
    const rng = () => (seed = (seed * 9301 + 49297) % 233280) / 233280;
    const a = longPrompt(2048, rng);
    const b = longPrompt(2048, rng);
    // The nonce comes first: no prefix cache can serve the second from the first.
    expect(a.prompt.slice(0, 20)).not.toBe(b.prompt.slice(0, 20));
    expect(a.prompt.endsWith(`Repeat exactly: ${a.expected}`)).toBe(true);
  });
});

describe('longinput', () => {
  it('sends one request of about promptTokens and passes on the exact echo', async () => {
    server = await echoing();
    const { signal } = await runOnce(server.url, 'longinput', { probe: { promptTokens: 4096 } });
    expect(signal.result).toBe('ok');
    const req = JSON.parse(server.requests[0]!.body) as Sent;
    expect(req.messages).toHaveLength(1);
    const words = fillerTokens(req.messages[0]!.content);
    expect(words).toBeGreaterThan(4000);
    expect(words).toBeLessThanOrEqual(4096);
  });

  it('a wrong answer is wrong_output naming the length', async () => {
    server = await echoing({ text: () => 'I cannot read that much.' });
    const { signal } = await runOnce(server.url, 'longinput', { probe: { promptTokens: 1024 } });
    expect(signal.result).toBe('wrong_output');
    expect(signal.error).toMatch(
      /^1024-token prompt \(\d+ by the engine's count\): wrong answer to .*got "I cannot read that much\."$/,
    );
  });
});

describe('conversation', () => {
  it('runs its rounds over one connection, each resending the conversation so far, TTFT per round in the detail', async () => {
    server = await echoing();
    const { signal } = await runOnce(server.url, 'conversation', {
      probe: { rounds: 3, roundTokens: 64, conn: ['keepalive'] },
      conn: 'keepalive',
    });
    expect(signal.result).toBe('ok');
    expect(server.connections).toBe(1);
    const sent = server.requests.filter((r) => r.body !== '').map((r) => JSON.parse(r.body) as Sent);
    expect(sent.map((r) => r.messages.length)).toEqual([1, 3, 5]);
    // Each round carries the previous answer back as the assistant's turn.
    expect(sent[1]!.messages[1]).toMatchObject({ role: 'assistant' });
    expect(signal.detail?.rounds?.map((r) => r.round)).toEqual([1, 2, 3]);
  });

  it('a round whose first token grows past ttftGrowth × round 1 (and the floor) fails naming the round', async () => {
    server = await echoing({ delayMs: (i) => (i === 2 ? 400 : 5) });
    const { signal } = await runOnce(server.url, 'conversation', {
      probe: { rounds: 3, roundTokens: 64, ttftGrowth: 2, ttftGrowthFloor: '100ms' },
      conn: 'keepalive',
    });
    expect(signal.result).toBe('bad_response');
    expect(signal.error).toMatch(
      /^round 3 of 3: time to first token \d+ ms, [\d.]+× round 1's \d+ ms \(over ttftGrowth 2\)/,
    );
  });

  it('an unset ttftGrowth is 2, or 1.5 at 2 rounds, below the rounds either way; a set one is checked against them', () => {
    const parse = (p: Record<string, unknown>) =>
      targetSchema.safeParse({
        name: 'pd',
        endpoints: [{ name: 'router', url: 'http://127.0.0.1:1' }],
        probes: [{ name: 'talk', kind: 'conversation', every: '5m', ...p }],
      });
    const factor = (p: Record<string, unknown>) => {
      const r = parse(p);
      if (!r.success) throw new Error(r.error.message);
      return growthFactor(r.data.probes[0] as ProbeOf<'conversation'>);
    };
    expect(factor({})).toBe(2);
    // A 2-round conversation (the least the schema allows) loaded before the factor had to be below the rounds.
    expect(factor({ rounds: 2 })).toBe(1.5);
    expect(factor({ rounds: 8, ttftGrowth: 4 })).toBe(4);
    expect(parse({ rounds: 3, ttftGrowth: 3 }).success).toBe(false);
  });

  it('growth under the floor is noise, whatever the factor', async () => {
    server = await echoing({ delayMs: (i) => (i === 2 ? 60 : 1) });
    const { signal } = await runOnce(server.url, 'conversation', {
      probe: { rounds: 3, roundTokens: 64, ttftGrowthFloor: '2s' },
      conn: 'keepalive',
    });
    expect(signal.result).toBe('ok');
  });
});

describe('structured: a truncation is the setting only for a prefix of valid JSON that used the tokens', () => {
  it('isJsonPrefix', () => {
    for (const ok of [
      '',
      '{',
      '{"city": "Par',
      '{"city": "Paris", "coun',
      '[1, 2',
      '{"a": tr',
      '{"a": 1.',
      '{"a": {"b": [',
    ]) {
      expect(isJsonPrefix(ok), ok).toBe(true);
    }
    for (const bad of [
      '}',
      '{"city" "Paris"',
      '{"a": 1}}',
      '{"a": tru,',
      'Sure! {"city"',
      '{"a": 1} x',
      '[,',
    ]) {
      expect(isJsonPrefix(bad), bad).toBe(false);
    }
  });

  it('a valid-JSON prefix cut at max_tokens says raise maxTokens; a broken one is wrong_output, quoted', async () => {
    server = await echoing({ text: () => '{"city": "Par', finish: 'length' });
    // usageChunk(1) reports 1 completion token: a cut long before max_tokens is no setting problem.
    let { signal } = await runOnce(server.url, 'structured', { probe: { maxTokens: 1 } });
    expect(signal.result).toBe('bad_response');
    expect(signal.error).toMatch(/raise maxTokens$/);
    ({ signal } = await runOnce(server.url, 'structured', { probe: { maxTokens: 32 } }));
    expect(signal.result).toBe('wrong_output');
    expect(signal.error).toContain('finish_reason length after 1 of 32 tokens');
    await server.close();
    server = await echoing({ text: () => '{"city" Paris', finish: 'length' });
    ({ signal } = await runOnce(server.url, 'structured', { probe: { maxTokens: 1 } }));
    expect(signal.result).toBe('wrong_output');
    expect(signal.error).toBe(
      'structured output is not JSON (cut off at the token limit, but no prefix of valid JSON): "{\\"city\\" Paris"',
    );
  });
});
