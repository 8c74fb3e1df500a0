// toolcall: tool calls as clients make them, one matrix cell per request shape — tool_choice auto, required,
// a named function, none; parallel calls; a second turn that sends the tool result back; streamed and not.
// Each cell is judged on its own: calls come back as structured tool_calls whose arguments parse as JSON and
// validate against the tool's schema, no model markup leaks into content (./leak-markup.ts), and
// finish_reason "length" without a call fails (tool_choice "required" running to the token limit).
import { runChatJson } from './chat-json.js';
import { runChatStream, type ChatStreamSummary } from './chat-stream.js';
import { noConnection } from './conn-errors.js';
import { validate, type JsonSchema } from './json-schema.js';
import { TOOL_CASES } from '../../config/tool-cases.js';
import { findMarkup, type MarkupHit } from './leak-markup.js';
import { fillerText } from './prompt-text.js';
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
const NOTE_PARAMS: JsonSchema = {
  type: 'object',
  properties: { text: { type: 'string', description: 'The note, verbatim', minLength: 1 } },
  required: ['text'],
};
const TIME_TOOL = tool(TOOL_NAME, 'Returns the current time in a timezone.', TIME_PARAMS);
const WEATHER_TOOL = tool('get_weather', 'Returns the current weather in a city.', WEATHER_PARAMS);
export const NOTE_TOOL_NAME = 'save_note';
const NOTE_TOOL = tool(NOTE_TOOL_NAME, 'Saves a note verbatim.', NOTE_PARAMS);
const SCHEMAS: Record<string, JsonSchema> = {
  [TOOL_NAME]: TIME_PARAMS,
  get_weather: WEATHER_PARAMS,
  [NOTE_TOOL_NAME]: NOTE_PARAMS,
};

/**
 * The large-arguments cell's note: ≈ 2 KB of the built-in text (≈ 570 tokens), so its call streams in many
 * argument fragments. The cell asks for it verbatim and the reassembled arguments must carry it back.
 */
export const LARGE_NOTE = fillerText(570, 7);
/** Output room for the note's ≈ 570 tokens and the JSON around them. */
export const LARGE_ARGS_MAX_TOKENS = 768;
export const LARGE_ARGS_PROMPT_HEAD = 'Call save_note with text set to exactly this, unchanged:';

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
      // The prompt asks for the tool, so a server that ignores tool_choice "none" (or a parser that leaks there)
      // shows it; a server that honours it answers in words.
      return {
        messages: [{ role: 'user', content: ASK_TIME }],
        tools: [TIME_TOOL],
        tool_choice: 'none',
      };
    case 'large_args':
      return {
        messages: [{ role: 'user', content: `${LARGE_ARGS_PROMPT_HEAD}\n${LARGE_NOTE}` }],
        tools: [NOTE_TOOL],
        tool_choice: { type: 'function', function: { name: NOTE_TOOL_NAME } },
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

/** Where a leak was found, for the message. */
function leakIn(s: ChatStreamSummary): { where: string; hit: MarkupHit } | undefined {
  const places: [string, string][] = [
    ['content', s.answer],
    // The reasoning field (vLLM `reasoning`, SGLang `reasoning_content`): a call written inside the thinking.
    ['the reasoning', s.reasoning],
    // A parser that never split reasoning from content leaves the two interleaved in `content`.
    ['content', s.content],
  ];
  for (const [i, tc] of [...s.toolCalls.values()].entries()) {
    places.push(
      [`tool_calls[${i}].function.name`, tc.name],
      [`tool_calls[${i}].function.arguments`, tc.arguments],
    );
  }
  for (const [where, text] of places) {
    const hit = findMarkup(text);
    if (hit) return { where, hit };
  }
  return undefined;
}

/** What a cell found wrong with an answer; undefined when it passes. */
export function judgeCell(c: ToolCase, s: ChatStreamSummary): Omit<MatrixCell, 'cell'> | undefined {
  const leak = leakIn(s);
  if (leak !== undefined) {
    return {
      result: 'toolcall_leak',
      error: `${leak.hit.family} tool-call markup ${JSON.stringify(leak.hit.text)}${leak.hit.shape === 'call' ? '' : ` (${leak.hit.shape === 'orphan' ? 'a closing tag with no opening one' : 'an opening tag never closed'})`} in ${leak.where} (${s.toolCalls.size} structured tool_calls)`,
    };
  }
  const bad = (error: string) => ({ result: 'bad_response' as const, error });
  const calls = [...s.toolCalls.values()];
  if (c === 'none') {
    // The parser layer ignored the request's contract: counted with the leaks (the same runbook: the parser).
    if (calls.length > 0)
      return {
        result: 'toolcall_leak',
        error: `tool_choice "none" answered with ${calls.length} tool call(s) (${calls.map((tc) => tc.name).join(', ')})`,
      };
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
      // Large streamed arguments that do not parse were broken on reassembly: the output is wrong, not absent.
      return {
        result: c === 'large_args' ? ('wrong_output' as const) : ('bad_response' as const),
        error: `tool_calls[${i}] (${tc.name}) arguments (${tc.arguments.length} bytes) are not valid JSON: ${JSON.stringify(redactor.clip(tc.arguments, 80))}`,
      };
    }
    const problem = validate(args, schema);
    if (problem) return bad(`tool_calls[${i}] (${tc.name}) arguments break the schema: ${problem}`);
  }
  if (c === 'large_args') {
    // Parsed and schema-valid above; the note must come back whole. A fragment lost, doubled or reordered on the
    // way (a streaming parser's diff bug) reassembles to valid-looking JSON that says something else.
    const text = (JSON.parse(calls[0]!.arguments) as { text?: unknown }).text;
    const got = typeof text === 'string' ? text.trim().replace(/\s+/g, ' ') : '';
    const want = LARGE_NOTE.replace(/\s+/g, ' ');
    if (calls[0]!.name !== NOTE_TOOL_NAME || got !== want) {
      const at = [...want].findIndex((ch, i) => got[i] !== ch);
      return {
        result: 'wrong_output',
        error: `${calls[0]!.name} arguments (${calls[0]!.arguments.length} bytes) reassemble to a different note: differs at character ${at < 0 ? want.length : at}, got ${JSON.stringify(redactor.clip(got.slice(Math.max(0, at - 20), at + 40), 80))}`,
      };
    }
  }
  if (c === 'named' && calls.some((tc) => tc.name !== TOOL_NAME))
    return bad(`named tool_choice ${TOOL_NAME}, got ${calls.map((tc) => tc.name).join(', ')}`);
  if (c === 'parallel' && new Set(calls.map((tc) => tc.name)).size < 2)
    return bad(
      `parallel_tool_calls: expected calls to both tools, got ${calls.map((tc) => tc.name).join(', ')}`,
    );
  return undefined;
}

/**
 * A cell that failed: its own result and status. A socket error (the server closed or reset this cell's
 * connection) is this cell's failure, not the matrix's: the next cell opens a new connection. A timeout or a
 * cancel ends the run (the runner owns the deadline).
 */
function cellFailure(ctx: Ctx, cell: string, err: unknown): MatrixCell {
  if (err instanceof ProbeFailure) {
    return {
      cell,
      result: err.result,
      error: err.message,
      ...(err.status !== undefined ? { status: err.status } : {}),
    };
  }
  if (ctx.signal.aborted) throw err;
  const what = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  const why = typeof code === 'string' && !what.includes(code) ? `${code}: ${what}` : what;
  // Refused (nothing listening): the server is gone, not answering badly. Every cell refused makes the matrix a
  // connect_error, which the scheduler rechecks within seconds and the detector reads as refused: a matrix every 5 m
  // that ran inside a kill -9 read `bad_response` and waited out its retry backoff after the restart (issue 38).
  if (noConnection(err)) return { cell, result: 'connect_error', error: `no connection: ${why}` };
  const status = ctx.progress.responseHeaders ? ctx.progress.status : undefined;
  return status === undefined
    ? { cell, result: 'bad_response', error: `connection closed before response headers: ${why}` }
    : {
        cell,
        result: 'bad_response',
        status,
        error: `connection broke after the headers (HTTP ${status}): ${why}`,
      };
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
    // A parallel pair needs room for two calls' arguments, the large note for its ≈ 450 tokens.
    const room = c === 'large_args' ? LARGE_ARGS_MAX_TOKENS : c === 'parallel' ? 128 : 64;
    const body = { ...request(c), max_tokens: Math.max(ctx.probe.maxTokens, room) };
    try {
      const s = mode === 'nonstream' ? await runChatJson(ctx, body) : await runChatStream(ctx, body);
      last = s;
      const problem = judgeCell(c, s);
      out.push(problem ? { cell, ...problem } : { cell, result: 'ok' });
    } catch (err) {
      out.push(cellFailure(ctx, cell, err));
    }
  }
  return { cells: out, last };
}

export const toolcallProbe: ProbeFn<ProbeOf<'toolcall'>> = async (ctx) => {
  const run = await runToolMatrix(ctx, ctx.probe.cells);
  const failed = run.cells.filter((c) => c.result !== 'ok');
  const detail = { cells: run.cells };
  if (failed.length > 0) {
    // Wrong output outranks the rest (the deployment answers wrong); a leak is a parser problem on a finished
    // completion, so any other failure says more about the run.
    // A refused cell beside cells that reached the server (it came back mid-matrix) is not the matrix's result.
    const worst =
      failed.find((c) => c.result === 'wrong_output') ??
      failed.find((c) => c.result !== 'toolcall_leak' && c.result !== 'connect_error') ??
      failed.find((c) => c.result !== 'toolcall_leak') ??
      failed[0]!;
    const message = failed
      .map(
        (c) =>
          `${c.cell}: ${c.result}${c.status !== undefined ? ` HTTP ${c.status}` : ''}${c.error ? ` (${c.error})` : ''}`,
      )
      .join('; ');
    // The status is the failing cell's own (none when its connection closed before headers), not the last
    // cell that answered; the runner falls back to the progress's status, so that is the cell's too.
    ctx.progress.status = worst.status;
    throw new ProbeFailure(worst.result, `tool-call matrix: ${message}`, worst.status, detail);
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
