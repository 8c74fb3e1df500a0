// structured: a completion with `response_format: {type: "json_schema"}` and a small schema; the output must
// parse and validate. Structured output runs through the engine's grammar backend (xgrammar, outlines,
// llguidance), which can stall or fail on its own while plain chat works — vLLM's
// v1/structured_output/backend_xgrammar.py logs "Failed to advance FSM for request %s for tokens %s" when
// its matcher rejects a token. A hang here with chat passing is degraded/structured_output_stalled.
import type { ProbeOf } from '../../config/schema.js';
import { extractAnswer, plausibleText } from './answer.js';
import { isJsonPrefix } from './json-prefix.js';
import { runChatStream } from './chat-stream.js';
import { validate, type JsonSchema } from './json-schema.js';
import { ProbeFailure, type ProbeFn } from './types.js';
import { redactor } from '../../lib/redact.js';

export const STRUCTURED_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1, maxLength: 64 },
    country: { type: 'string', minLength: 1, maxLength: 64 },
  },
  required: ['city', 'country'],
  additionalProperties: false,
};

const PROMPT = 'Name the capital of France as JSON with the fields city and country.';

/** Removes a code fence some models put around JSON even under a grammar. */
function unfence(text: string): string {
  const m = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(text.trim());
  return m ? m[1]! : text.trim();
}

export const structuredProbe: ProbeFn<ProbeOf<'structured'>> = async (ctx) => {
  const s = await runChatStream(ctx, {
    messages: [{ role: 'user', content: PROMPT }],
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'wedgewatch_probe', schema: STRUCTURED_SCHEMA, strict: true },
    },
  });
  const text = unfence(extractAnswer(s.answer).answer);
  const quoted = JSON.stringify(redactor.clip(text, 120));
  if (text === '') {
    // Nothing in content: what came in reasoning_content is the output, and it is not the JSON.
    const reasoning = s.reasoning.trim();
    if (s.finishReason === 'length' && (reasoning === '' || plausibleText(reasoning)))
      throw new ProbeFailure(
        'bad_response',
        `no JSON within max_tokens ${ctx.probe.maxTokens} (finish_reason length${reasoning ? ', still thinking' : ''}): raise maxTokens or turn thinking off`,
        s.status,
      );
    throw new ProbeFailure(
      'wrong_output',
      `structured output is empty${reasoning ? `; reasoning_content: ${JSON.stringify(redactor.clip(reasoning, 120))}` : ''}`,
      s.status,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Cut at the token limit while still a prefix of valid JSON, having used the tokens: the setting. Cut short
    // of the limit, or not a prefix of any JSON: the output is broken (a grammar that stopped it early).
    const usedAll = s.tokens >= ctx.probe.maxTokens;
    if (s.finishReason === 'length' && usedAll && isJsonPrefix(text)) {
      throw new ProbeFailure(
        'bad_response',
        `JSON cut off at max_tokens ${ctx.probe.maxTokens} (finish_reason length): ${quoted}; raise maxTokens`,
        s.status,
      );
    }
    const why =
      s.finishReason === 'length' && !isJsonPrefix(text)
        ? ' (cut off at the token limit, but no prefix of valid JSON)'
        : s.finishReason === 'length'
          ? ` (finish_reason length after ${s.tokens} of ${ctx.probe.maxTokens} tokens)`
          : ` (finish_reason ${s.finishReason})`;
    throw new ProbeFailure('wrong_output', `structured output is not JSON${why}: ${quoted}`, s.status);
  }
  const problem = validate(value, STRUCTURED_SCHEMA);
  if (problem) {
    throw new ProbeFailure(
      'wrong_output',
      `structured output breaks its schema (${problem}): ${quoted}`,
      s.status,
    );
  }
  return { result: 'ok', status: s.status, tokens: s.tokens, tokensPerSecond: s.tokensPerSecond };
};
