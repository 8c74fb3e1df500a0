// toolcall: C concurrent multi-turn tool-calling conversations of R rounds each. Every assistant turn must come
// back as structured tool_calls with JSON arguments; a parser failure in the engine returns the raw markup as
// content with HTTP 200 (src/sources/probes/leak-markup.ts). Leaks are counted per response, by kind, and must be 0.
import { Pool } from '../lib/http/undici.js';
import { findToolMarkup } from '../sources/probes/toolcall.js';
import { reconnectedNote, streamChat, type StreamResult } from './load-client.js';
import type { ToolCallText } from './turn.js';
import { intKnob, maxTokensKnob, timeoutKnob } from './knob-specs.js';
import { defineStep } from './types.js';

export interface ToolcallKnobs {
  concurrency: number;
  rounds: number;
  maxTokens: number;
  timeoutMs: number;
}

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Current weather in a city.',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', description: 'City name, e.g. Paris' } },
        required: ['city'],
      },
    },
  },
];
const CITIES = ['Paris', 'Tokyo', 'Lima', 'Oslo', 'Cairo', 'Sydney', 'Denver', 'Seoul'];

export interface TurnOutcome {
  markup?: string;
  missingToolCalls: boolean;
  invalidJson: string[];
}

/** Classifies one completed turn: markup in content, missing tool_calls, arguments that are not JSON. */
export function classifyTurn(content: string, toolCalls: readonly ToolCallText[]): TurnOutcome {
  const invalidJson: string[] = [];
  for (const tc of toolCalls) {
    try {
      JSON.parse(tc.arguments);
    } catch {
      invalidJson.push(`${tc.name}(${tc.arguments.slice(0, 60)})`);
    }
  }
  return { markup: findToolMarkup(content), missingToolCalls: toolCalls.length === 0, invalidJson };
}

export const toolcallStep = defineStep<ToolcallKnobs>({
  name: 'toolcall',
  flagPrefix: 'toolcall',
  summary: 'C concurrent x R rounds of multi-turn tool-calling conversations; tool-call leaks must be 0',
  knobs: {
    concurrency: intKnob('concurrency', 40, 'concurrent conversations'),
    rounds: intKnob('rounds', 3, 'tool-calling rounds per conversation'),
    maxTokens: maxTokensKnob(256, 'per turn'),
    timeoutMs: timeoutKnob(120_000, 'limit per turn'),
  },
  async run(ctx, k) {
    const pool = new Pool(ctx.target.origin, { connections: k.concurrency, pipelining: 1 });
    const counts = { turns: 0, leaks: 0, markup: 0, missingToolCalls: 0, invalidJson: 0, errors: 0 };
    const sent: Pick<StreamResult, 'reconnected'>[] = [];
    const examples: string[] = [];
    const note = (s: string) => {
      if (examples.length < 5) examples.push(s);
    };
    const conversation = async (conv: number) => {
      const messages: unknown[] = [
        {
          role: 'system',
          content: 'You are a weather assistant. Always answer by calling the get_weather tool.',
        },
        { role: 'user', content: `What is the weather in ${CITIES[conv % CITIES.length]}?` },
      ];
      for (let round = 0; round < k.rounds; round++) {
        const r = await streamChat(pool, ctx.target, {
          messages,
          maxTokens: k.maxTokens,
          timeoutMs: k.timeoutMs,
          extra: { tools: TOOLS, tool_choice: 'auto', temperature: 0 },
          collect: true,
        });
        counts.turns++;
        sent.push({ reconnected: r.reconnected });
        if (!r.ok || !r.turn) {
          counts.errors++;
          note(`conversation ${conv} round ${round + 1}: ${r.error}`);
          return;
        }
        const { content, toolCalls: calls } = r.turn;
        const c = classifyTurn(content, calls);
        if (c.markup !== undefined) counts.markup++;
        if (c.missingToolCalls) counts.missingToolCalls++;
        if (c.invalidJson.length) counts.invalidJson++;
        if (c.markup !== undefined || c.missingToolCalls || c.invalidJson.length) {
          counts.leaks++;
          note(
            `conversation ${conv} round ${round + 1}: ` +
              [
                c.markup !== undefined
                  ? `markup ${JSON.stringify(c.markup)} in content ${JSON.stringify(content.slice(0, 80))}`
                  : '',
                c.missingToolCalls ? 'no tool_calls' : '',
                c.invalidJson.length ? `invalid JSON arguments ${c.invalidJson.join(', ')}` : '',
              ]
                .filter(Boolean)
                .join('; '),
          );
        }
        // Continue the conversation as a client would: the call and its result, then the next question.
        if (calls.length) {
          messages.push({
            role: 'assistant',
            content: null,
            tool_calls: calls.map((tc, i) => ({
              id: tc.id ?? `call_${conv}_${round}_${i}`,
              type: 'function',
              function: { name: tc.name, arguments: tc.arguments },
            })),
          });
          calls.forEach((tc, i) =>
            messages.push({
              role: 'tool',
              tool_call_id: tc.id ?? `call_${conv}_${round}_${i}`,
              content: '{"temp_c": 21, "sky": "clear"}',
            }),
          );
        } else messages.push({ role: 'assistant', content });
        messages.push({ role: 'user', content: `And in ${CITIES[(conv + round + 1) % CITIES.length]}?` });
      }
    };
    try {
      await Promise.all(Array.from({ length: k.concurrency }, (_, i) => conversation(i)));
    } finally {
      await pool.destroy().catch(() => {});
    }
    const line =
      `leaks=${counts.leaks} of ${counts.turns} turns (markup in content ${counts.markup}, missing tool_calls ` +
      `${counts.missingToolCalls}, invalid JSON arguments ${counts.invalidJson}); errors=${counts.errors}`;
    const limit = noToolCallsNote(counts);
    ctx.progress(line);
    return {
      ok: counts.leaks === 0 && counts.errors === 0 && counts.turns === k.concurrency * k.rounds,
      summary: limit !== undefined ? `${line} (${limit})` : line,
      details: [
        `C=${k.concurrency} x R=${k.rounds}: ${line}`,
        ...(limit !== undefined ? [limit] : []),
        ...examples,
        ...reconnectedNote(sent),
      ],
      figures: {},
      data: { ...counts, reconnected: sent.filter((r) => r.reconnected).length },
    };
  },
});

/**
 * What it means when most turns made no tool call and none leaked markup or broke its JSON: the model does not call
 * tools (random weights, or one not trained for them), which no server fixes; a parser that leaks shows markup in
 * the content instead. Undefined when that is not what was seen.
 */
export function noToolCallsNote(c: {
  turns: number;
  missingToolCalls: number;
  markup: number;
  invalidJson: number;
}): string | undefined {
  if (c.turns === 0 || c.markup > 0 || c.invalidJson > 0 || c.missingToolCalls * 2 <= c.turns)
    return undefined;
  return `no tool call in ${c.missingToolCalls} of ${c.turns} turns and no leaked markup: the model does not call tools (random weights, or not trained for them), not a parser that leaks`;
}
