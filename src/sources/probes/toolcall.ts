// toolcall: tool calls as clients make them, one matrix cell per request shape — tool_choice auto, required,
// a named function, none; parallel calls; a second turn that sends the tool result back; streamed and not.
// Each cell is judged on its own: calls come back as structured tool_calls whose arguments parse as JSON and
// validate against the tool's schema, no model markup leaks into content (./leak-markup.ts), and
// finish_reason "length" without a call fails (tool_choice "required" running to the token limit).
import { runChatJson } from './chat-json.js';
import { runChatStream, type ChatStreamSummary } from './chat-stream.js';
import { validate, type JsonSchema } from './json-schema.js';
import { TOOL_CASES } from './tool-cases.js';
import { findMarkup } from './leak-markup.js';
import type { ProbeOf } from '../../config/schema.js';
import type { MatrixCell } from '../../core/signals.js';
import { ProbeFailure, type ProbeContext, type ProbeFn } from './types.js';
import { redactor } from '../../lib/redact.js';

type Ctx = ProbeContext<ProbeOf<'toolcall'>>;

export const TOOL_NAME = 'get_current_time';

const TIME_PARAMS: JsonSchema = {
  type: 'object',
  properties: { timezone: { type: 'string', description: 'IANA timezone, e.g. UTC', minLength: 1 } },
  required: ['timezone'],
};
const WEATHER_PARAMS: JsonSchema = {
  type: 'object',
  properties: { city: { type: 'string', description: 'City name, e.g. Paris', minLength: 1 } },
  required: ['city'],
};
const tool = (name: string, description: string, parameters: JsonSchema) => ({
  type: 'function',
  function: { name, description, parameters },
});
const TIME_TOOL = tool(TOOL_NAME, 'Returns the current time in a timezone.', TIME_PARAMS);
const WEATHER_TOOL = tool('get_weather', 'Returns the current weather in a city.', WEATHER_PARAMS);
const SCHEMAS: Record<string, JsonSchema> = { [TOOL_NAME]: TIME_PARAMS, get_weather: WEATHER_PARAMS };

export type ToolCase = (typeof TOOL_CASES)[number];

const ASK_TIME = 'What time is it in UTC? Use the get_current_time tool.';

function request(c: ToolCase): Record<string, unknown> {
  switch (c) {
    case 'auto':
      return { messages: [{ role: 'user', content: ASK_TIME }], tools: [TIME_TOOL], tool_choice: 'auto' };
    case 'required':
      return { messages: [{ role: 'user', content: ASK_TIME }], tools: [TIME_TOOL], tool_choice: 'required' };
    case 'named':
      return {
        messages: [{ role: 'user', content: ASK_TIME }],
        tools: [WEATHER_TOOL, TIME_TOOL],
        tool_choice: { type: 'function', function: { name: TOOL_NAME } },
      };
    case 'none':
      return {
        messages: [{ role: 'user', content: 'Say OK.' }],
        tools: [TIME_TOOL],
        tool_choice: 'none',
      };
    case 'parallel':
      return {
        messages: [
          {
            role: 'user',
            content: 'Call get_current_time for UTC and get_weather for Paris, both at once, in one reply.',
          },
        ],
        tools: [TIME_TOOL, WEATHER_TOOL],
        tool_choice: 'auto',
        parallel_tool_calls: true,
      };
    case 'second_turn':
      return {
        messages: [
          { role: 'user', content: ASK_TIME },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_wedgewatch_1',
                type: 'function',
                function: { name: TOOL_NAME, arguments: '{"timezone": "UTC"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'call_wedgewatch_1', content: '{"time": "12:00:00Z"}' },
        ],
        tools: [TIME_TOOL],
        tool_choice: 'auto',
      };
  }
}

/** What a cell found wrong with an answer; undefined when it passes. */
export function judgeCell(c: ToolCase, s: ChatStreamSummary): Omit<MatrixCell, 'cell'> | undefined {
  const leak = findMarkup(s.content);
  if (leak !== undefined) {
    return {
      result: 'toolcall_leak',
      error: `${leak.family} tool-call markup ${JSON.stringify(leak.text)} in content (${s.toolCalls.size} structured tool_calls)`,
    };
  }
  const bad = (error: string) => ({ result: 'bad_response' as const, error });
  const calls = [...s.toolCalls.values()];
  if (c === 'none') {
    if (calls.length > 0) return bad(`tool_choice "none" answered with ${calls.length} tool call(s)`);
    if (s.answer.trim() === '') return bad(`tool_choice "none" answered with no content`);
    return undefined;
  }
  if (c === 'second_turn' && calls.length === 0) {
    // The tool result went back; the model answers in text.
    return s.answer.trim() === '' ? bad('no answer after the tool result') : undefined;
  }
  if (calls.length === 0) {
    return s.finishReason === 'length'
      ? bad(`finish_reason "length" without a tool call`)
      : bad(`no tool_calls in the answer (finish_reason ${s.finishReason})`);
  }
  for (const [i, tc] of calls.entries()) {
    if (tc.name === '') return bad(`tool_calls[${i}] has no function name`);
    const schema = SCHEMAS[tc.name];
    if (schema === undefined)
      return bad(`tool_calls[${i}] calls an unknown function ${JSON.stringify(tc.name)}`);
    let args: unknown;
    try {
      args = JSON.parse(tc.arguments);
    } catch {
      return bad(
        `tool_calls[${i}] (${tc.name}) arguments are not valid JSON: ${JSON.stringify(redactor.clip(tc.arguments, 80))}`,
      );
    }
    const problem = validate(args, schema);
    if (problem) return bad(`tool_calls[${i}] (${tc.name}) arguments break the schema: ${problem}`);
  }
  if (c === 'named' && calls.some((tc) => tc.name !== TOOL_NAME))
    return bad(`named tool_choice ${TOOL_NAME}, got ${calls.map((tc) => tc.name).join(', ')}`);
  if (c === 'parallel' && new Set(calls.map((tc) => tc.name)).size < 2)
    return bad(
      `parallel_tool_calls: expected calls to both tools, got ${calls.map((tc) => tc.name).join(', ')}`,
    );
  return undefined;
}

/** Runs the cells in order; a cell's failure is recorded and the next cell still runs. */
export async function runToolMatrix(
  ctx: Ctx,
  cells: readonly string[],
): Promise<{ cells: MatrixCell[]; last?: ChatStreamSummary }> {
  const out: MatrixCell[] = [];
  let last: ChatStreamSummary | undefined;
  for (const cell of cells) {
    const [c, mode] = cell.split('/') as [ToolCase, string | undefined];
    if (!TOOL_CASES.includes(c)) throw new Error(`unknown tool-call matrix cell ${JSON.stringify(cell)}`);
    // A parallel pair needs room for two calls' arguments.
    const body = { ...request(c), max_tokens: Math.max(ctx.probe.maxTokens, c === 'parallel' ? 128 : 64) };
    try {
      const s = mode === 'nonstream' ? await runChatJson(ctx, body) : await runChatStream(ctx, body);
      last = s;
      const problem = judgeCell(c, s);
      out.push(problem ? { cell, ...problem } : { cell, result: 'ok' });
    } catch (err) {
      if (!(err instanceof ProbeFailure)) throw err;
      out.push({ cell, result: err.result, error: err.message });
    }
  }
  return { cells: out, last };
}

export const toolcallProbe: ProbeFn<ProbeOf<'toolcall'>> = async (ctx) => {
  const run = await runToolMatrix(ctx, ctx.probe.cells);
  const failed = run.cells.filter((c) => c.result !== 'ok');
  const detail = { cells: run.cells };
  if (failed.length > 0) {
    // A leak is a parser problem on a finished completion: any other failure says more about the run.
    const result = failed.find((c) => c.result !== 'toolcall_leak')?.result ?? 'toolcall_leak';
    const message = failed.map((c) => `${c.cell}: ${c.result}${c.error ? ` (${c.error})` : ''}`).join('; ');
    throw new ProbeFailure(result, `tool-call matrix: ${message}`, run.last?.status, detail);
  }
  return {
    result: 'ok',
    status: run.last?.status,
    tokens: run.last?.tokens,
    tokensPerSecond: run.last?.tokensPerSecond,
    detail,
  };
};

/** Kept for callers of the one-family check (verify's toolcall step): any family's markup. */
export function findToolMarkup(text: string): string | undefined {
  return findMarkup(text)?.text;
}
