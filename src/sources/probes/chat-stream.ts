// Sends a streaming /v1/chat/completions request and validates the stream the way SGLang and vLLM write it
// (SGLang entrypoints/openai/serving_chat.py _generate_chat_stream @0c078e6): `data: {json}\n\n` chunks, a
// finish chunk, an optional usage chunk with `choices: []`, and `data: [DONE]` last. Shared by the chat and
// toolcall probes.
import type { CompletionProbeConfig } from '../../config/schema.js';
import { SseFramingError, SseParser } from './sse.js';
import { readSnippet, send } from './request.js';
import { ProbeFailure, type ProbeContext } from './types.js';
import { redactor } from '../../lib/redact.js';
import { reasoningText } from './reasoning-field.js';

/** A chat probe asks for a handful of tokens: a few KB of SSE. Far more than this is a broken server. */
export const CHAT_BODY_CAP = 1024 * 1024;
const CONTENT_CAP = 64 * 1024;
const OK_FINISH = new Set(['stop', 'length', 'tool_calls']);

export interface ToolCallAccum {
  id?: string;
  name: string;
  arguments: string;
}

export interface ChatStreamSummary {
  status: number;
  /** Content and reasoning text seen (capped), for leak checks. */
  content: string;
  /** `delta.content` alone (capped): the answer, without a parser-separated reasoning_content. */
  answer: string;
  /** `delta.reasoning` (vLLM) or `delta.reasoning_content` (SGLang) alone (capped): what a reasoning parser set apart. */
  reasoning: string;
  /** Reasoning arrived after answer text had: the model went back to thinking once it had answered. */
  reasoningAfterAnswer?: boolean;
  toolCalls: Map<number, ToolCallAccum>;
  finishReason: string;
  /** Usage completion_tokens when the server sent a usage chunk, else the counted token chunks. */
  tokens: number;
  /** usage.prompt_tokens + completion_tokens when the server sent usage: what the run cost the engine. */
  engineTokens?: number;
  /** usage.prompt_tokens when the server sent usage. */
  promptTokens?: number;
  /** When the first token came, in ms since the run started (progress.elapsed()); absent for a JSON reply. */
  firstTokenAt?: number;
  tokensPerSecond?: number;
}

interface Delta {
  content?: unknown;
  tool_calls?: unknown;
}

function asObject(v: unknown): Record<string, unknown> | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

export async function runChatStream(
  ctx: ProbeContext<CompletionProbeConfig>,
  extra: Record<string, unknown>,
): Promise<ChatStreamSummary> {
  const { progress, probe } = ctx;
  const json: Record<string, unknown> = {
    model: ctx.model,
    // A kind without a `prompt` field (toolcall) passes its own messages in `extra`.
    ...('prompt' in probe ? { messages: [{ role: 'user', content: probe.prompt }] } : {}),
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: probe.maxTokens,
    temperature: 0,
    ...extra,
  };
  // The event cap follows the max_tokens actually sent: a caller (the toolcall probe) may raise it.
  const sentMaxTokens = typeof json.max_tokens === 'number' ? json.max_tokens : probe.maxTokens;
  const res = await send(ctx, {
    method: 'POST',
    path: '/v1/chat/completions',
    bodyPhase: 'first_token',
    json,
  });
  if (res.status !== 200) {
    const snippet = await readSnippet(res);
    throw new ProbeFailure('http_error', `HTTP ${res.status}${snippet ? `: ${snippet}` : ''}`, res.status);
  }
  if (!res.contentType.toLowerCase().startsWith('text/event-stream')) {
    const snippet = await readSnippet(res, 200);
    throw new ProbeFailure(
      'bad_response',
      `expected content-type text/event-stream, got ${JSON.stringify(res.contentType)}${snippet ? `: ${snippet}` : ''}`,
      res.status,
    );
  }

  // An endless stream of well-formed chunks must not run until the timeout: a few tokens need a few events.
  const maxEvents = Math.max(64, sentMaxTokens * 4 + 32);
  const parser = new SseParser();
  const decoder = new TextDecoder('utf-8');
  let bytes = 0;
  let events = 0;
  let done = false;
  let counted = 0;
  let usageTokens: number | undefined;
  let promptTokens: number | undefined;
  let answer = '';
  let reasoning = '';
  let reasoningAfterAnswer = false;
  let finishReason: string | undefined;
  let firstTokenAt: number | undefined;
  let lastTokenAt = 0;
  let content = '';
  const toolCalls = new Map<number, ToolCallAccum>();

  const fail = (message: string): never => {
    res.body.destroy();
    throw new ProbeFailure('bad_response', message, res.status);
  };

  const token = () => {
    const at = progress.elapsed();
    counted++;
    lastTokenAt = at;
    if (firstTokenAt === undefined) {
      firstTokenAt = at;
      progress.ttftMs = at;
      progress.phase = 'stream';
      progress.mark('first token');
    }
  };

  const onEvent = (data: string) => {
    events++;
    if (events > maxEvents) fail(`stream did not finish after ${maxEvents} events`);
    if (done) {
      fail('data after [DONE]');
    }
    if (data === '[DONE]') {
      done = true;
      progress.mark('[DONE]');
      return;
    }
    let obj: Record<string, unknown> | undefined;
    try {
      obj = asObject(JSON.parse(data));
    } catch {
      fail(`invalid JSON in SSE event ${events}: ${JSON.stringify(redactor.clip(data, 80))}`);
    }
    if (obj === undefined) return fail(`SSE event ${events} is not a JSON object`);
    const err = asObject(obj.error);
    if (err !== undefined || typeof obj.error === 'string') {
      const msg = err ? String(err.message ?? JSON.stringify(err)) : String(obj.error);
      fail(`error chunk in stream: ${redactor.clip(msg, 200)}`);
    }
    // SGLang's streaming ErrorResponse: {"object": "error", "message": …, "type": …, "code": …}.
    if (obj.object === 'error')
      fail(`error chunk in stream: ${redactor.clip(String(obj.message ?? ''), 200)}`);
    const usage = asObject(obj.usage);
    if (usage && typeof usage.completion_tokens === 'number') usageTokens = usage.completion_tokens;
    if (usage && typeof usage.prompt_tokens === 'number') promptTokens = usage.prompt_tokens;
    if (!Array.isArray(obj.choices)) fail(`SSE event ${events} has no choices array`);
    for (const c of obj.choices as unknown[]) {
      const choice = asObject(c);
      if (choice === undefined) continue;
      const raw = asObject(choice.delta) ?? {};
      const delta = raw as Delta;
      const thought = reasoningText(raw);
      for (const text of [delta.content, thought]) {
        if (typeof text === 'string' && text !== '') {
          token();
          if (content.length < CONTENT_CAP) content += text;
        }
      }
      if (thought !== undefined && thought.trim() !== '' && answer.trim() !== '') reasoningAfterAnswer = true;
      if (typeof delta.content === 'string' && answer.length < CONTENT_CAP) answer += delta.content;
      if (thought !== undefined && reasoning.length < CONTENT_CAP) reasoning += thought;
      if (Array.isArray(delta.tool_calls)) {
        token();
        for (const raw of delta.tool_calls as unknown[]) {
          const tc = asObject(raw);
          if (tc === undefined) continue;
          const index = typeof tc.index === 'number' ? tc.index : 0;
          const acc = toolCalls.get(index) ?? { name: '', arguments: '' };
          if (typeof tc.id === 'string') acc.id = tc.id;
          const fn = asObject(tc.function);
          if (typeof fn?.name === 'string') acc.name += fn.name;
          if (typeof fn?.arguments === 'string' && acc.arguments.length < CONTENT_CAP)
            acc.arguments += fn.arguments;
          toolCalls.set(index, acc);
        }
      }
      if (typeof choice.finish_reason === 'string') finishReason = choice.finish_reason;
    }
  };

  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      progress.mark(() => `chunk ${chunk.length} bytes`);
      if (bytes > CHAT_BODY_CAP) fail(`stream exceeds ${CHAT_BODY_CAP} bytes`);
      for (const ev of parser.push(decoder.decode(chunk, { stream: true }))) onEvent(ev.data);
    }
    parser.push(decoder.decode());
    parser.end();
  } catch (err) {
    if (err instanceof SseFramingError) fail(`malformed SSE: ${err.message}`);
    throw err;
  }
  progress.mark(`stream ended: ${events} events, ${bytes} bytes`);

  if (bytes === 0) throw new ProbeFailure('empty', 'HTTP 200 with an empty body', res.status);
  if (!done) fail(`stream ended without data: [DONE] after ${events} events`);
  if (finishReason === undefined) fail('stream finished without a finish_reason');
  if (!OK_FINISH.has(finishReason!)) fail(`finish_reason ${JSON.stringify(finishReason)}`);
  const tokens = usageTokens ?? counted;
  if (tokens === 0 || counted === 0) {
    throw new ProbeFailure('empty', `stream finished (${finishReason}) without any token`, res.status);
  }
  const span = firstTokenAt === undefined ? 0 : lastTokenAt - firstTokenAt;
  return {
    status: res.status,
    content,
    answer,
    reasoning,
    ...(reasoningAfterAnswer ? { reasoningAfterAnswer } : {}),
    toolCalls,
    finishReason: finishReason!,
    tokens,
    engineTokens:
      promptTokens !== undefined && usageTokens !== undefined ? promptTokens + usageTokens : undefined,
    promptTokens,
    firstTokenAt,
    // After the first token, per the metric's definition; a single chunk has no rate.
    tokensPerSecond: tokens > 1 && span > 0 ? ((tokens - 1) * 1000) / span : undefined,
  };
}
