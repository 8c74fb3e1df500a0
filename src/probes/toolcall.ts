// toolcall: one tool, and the answer must come back as structured tool_calls with JSON arguments. A parser
// failure in the engine returns the model's raw tool markup as `content` with HTTP 200 (engine-signals.md §6).
import type { ProbeOf } from '../config/schema.js';
import { runChatStream } from './chat-stream.js';
import { ProbeFailure, type ProbeFn } from './types.js';

export const TOOL_NAME = 'get_current_time';

const TOOL = {
  type: 'function',
  function: {
    name: TOOL_NAME,
    description: 'Returns the current time in a timezone.',
    parameters: {
      type: 'object',
      properties: { timezone: { type: 'string', description: 'IANA timezone, e.g. UTC' } },
      required: ['timezone'],
    },
  },
};

const SEP = '[｜|‖]{1,2}';
/**
 * Tool-call markup that belongs in tool_calls, not in content: DeepSeek V3/V3.1 tokens
 * (<｜tool▁calls▁begin｜>, <｜tool▁call▁begin｜>, <｜tool▁sep｜>), DSML blocks of V3.2/V4 (<｜DSML｜function_calls>,
 * <｜DSML｜tool_calls>, <｜DSML｜invoke …>), and the ASCII `|`, doubled `｜｜` and `‖` variants clients have seen.
 */
export const TOOL_MARKUP = new RegExp(
  [
    `${SEP}\\s*DSML\\s*${SEP}`,
    `<${SEP}tool[▁_]calls?[▁_](?:begin|end)${SEP}>`,
    `<${SEP}tool[▁_]sep${SEP}>`,
  ].join('|'),
);

export function findToolMarkup(text: string): string | undefined {
  const m = TOOL_MARKUP.exec(text);
  return m ? m[0] : undefined;
}

export const toolcallProbe: ProbeFn<ProbeOf<'toolcall'>> = async (ctx) => {
  // The prompt asks for the call; max_tokens must leave room for the arguments.
  const s = await runChatStream(ctx, {
    messages: [{ role: 'user', content: 'What time is it in UTC? Use the get_current_time tool.' }],
    tools: [TOOL],
    tool_choice: 'auto',
    max_tokens: Math.max(ctx.probe.maxTokens, 64),
  });
  const leak = findToolMarkup(s.content);
  if (leak !== undefined) {
    throw new ProbeFailure(
      'toolcall_leak',
      `tool-call markup ${JSON.stringify(leak)} in content (${s.toolCalls.size} structured tool_calls)`,
      s.status,
    );
  }
  if (s.toolCalls.size === 0) {
    throw new ProbeFailure(
      'bad_response',
      `no tool_calls in the answer (finish_reason ${s.finishReason})`,
      s.status,
    );
  }
  for (const [i, tc] of s.toolCalls) {
    if (tc.name === '')
      throw new ProbeFailure('bad_response', `tool_calls[${i}] has no function name`, s.status);
    try {
      JSON.parse(tc.arguments);
    } catch {
      throw new ProbeFailure(
        'bad_response',
        `tool_calls[${i}] (${tc.name}) arguments are not valid JSON: ${JSON.stringify(tc.arguments.slice(0, 80))}`,
        s.status,
      );
    }
  }
  return { result: 'ok', status: s.status, tokens: s.tokens, tokensPerSecond: s.tokensPerSecond };
};
