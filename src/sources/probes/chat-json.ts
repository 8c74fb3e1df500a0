// A non-streaming /v1/chat/completions request: the other path clients take (tool-calling agents often do),
// with its own parser code in the engines. Returns the same summary as the streaming path.
import type { CompletionProbeConfig } from '../../config/schema.js';
import { readCapped, readSnippet, send } from './request.js';
import { CHAT_BODY_CAP, type ChatStreamSummary, type ToolCallAccum } from './chat-stream.js';
import { ProbeFailure, type ProbeContext } from './types.js';
import { redactor } from '../../lib/redact.js';
import { reasoningText } from './reasoning-field.js';

const OK_FINISH = new Set(['stop', 'length', 'tool_calls']);

const obj = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

export async function runChatJson(
  ctx: ProbeContext<CompletionProbeConfig>,
  body: Record<string, unknown>,
): Promise<ChatStreamSummary> {
  const json = { model: ctx.model, temperature: 0, ...body, stream: false };
  const res = await send(ctx, { method: 'POST', path: '/v1/chat/completions', bodyPhase: 'stream', json });
  if (res.status !== 200) {
    const snippet = await readSnippet(res);
    throw new ProbeFailure('http_error', `HTTP ${res.status}${snippet ? `: ${snippet}` : ''}`, res.status);
  }
  const text = (await readCapped(ctx, res, CHAT_BODY_CAP)).toString('utf8');
  if (text.length === 0) throw new ProbeFailure('empty', 'HTTP 200 with an empty body', res.status);
  let parsed: Record<string, unknown> | undefined;
  try {
    parsed = obj(JSON.parse(text));
  } catch {
    throw new ProbeFailure(
      'bad_response',
      `response is not JSON: ${JSON.stringify(redactor.clip(text, 80))}`,
      200,
    );
  }
  if (parsed === undefined) throw new ProbeFailure('bad_response', 'response is not a JSON object', 200);
  if (parsed.object === 'error' || parsed.error !== undefined) {
    const e = obj(parsed.error);
    const msg = String(e?.message ?? parsed.message ?? JSON.stringify(parsed.error));
    throw new ProbeFailure('bad_response', `error response: ${redactor.clip(msg, 200)}`, 200);
  }
  const choice = Array.isArray(parsed.choices) ? obj(parsed.choices[0]) : undefined;
  const message = obj(choice?.message);
  if (choice === undefined || message === undefined)
    throw new ProbeFailure('bad_response', 'response has no choices[0].message', 200);
  const finishReason = choice.finish_reason;
  if (typeof finishReason !== 'string' || !OK_FINISH.has(finishReason))
    throw new ProbeFailure('bad_response', `finish_reason ${JSON.stringify(finishReason)}`, 200);
  const answer = typeof message.content === 'string' ? message.content : '';
  const reasoning = reasoningText(message) ?? '';
  const toolCalls = new Map<number, ToolCallAccum>();
  if (Array.isArray(message.tool_calls)) {
    message.tool_calls.forEach((raw: unknown, i: number) => {
      const tc = obj(raw);
      const fn = obj(tc?.function);
      const args = fn?.arguments;
      toolCalls.set(i, {
        id: typeof tc?.id === 'string' ? tc.id : undefined,
        name: typeof fn?.name === 'string' ? fn.name : '',
        // Some servers send arguments as an object here; the OpenAI contract is a JSON string.
        arguments: typeof args === 'string' ? args : JSON.stringify(args ?? null),
      });
    });
  }
  const usage = obj(parsed.usage);
  const completion = typeof usage?.completion_tokens === 'number' ? usage.completion_tokens : undefined;
  const prompt = typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : undefined;
  const tokens = completion ?? (answer.length > 0 || toolCalls.size > 0 ? 1 : 0);
  if (tokens === 0) throw new ProbeFailure('empty', `completion (${finishReason}) without any token`, 200);
  return {
    status: res.status,
    content: reasoning + answer,
    answer,
    reasoning,
    toolCalls,
    finishReason,
    tokens,
    engineTokens: prompt !== undefined && completion !== undefined ? prompt + completion : undefined,
  };
}
