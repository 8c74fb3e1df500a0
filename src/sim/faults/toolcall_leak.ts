// The tool-call parser fails and the model's raw markup lands in `content` with no tool_calls (sglang
// #40236), in the markup of the model family served (`family`); or, in mode required_ignored, a
// tool_choice "required" request runs to finish_reason "length" in plain text without a call.
// Each family's markup is the one its parser in SGLang python/sglang/srt/function_call/ expects.
import type { FaultDef, FaultParams, ToolCallPlan } from './types.js';

/** DeepSeek-V3.2 DSML markup; block "function_calls" (V3.2, also emitted by V4 models) or "tool_calls" (V4). */
export function renderDsml(calls: ToolCallPlan[], block: string): string {
  const invokes = calls.map((c) => {
    const args = JSON.parse(c.arguments) as Record<string, unknown>;
    const params = Object.entries(args).map(([k, v]) => {
      const isString = typeof v === 'string';
      const text = isString ? v : JSON.stringify(v);
      return `<｜DSML｜parameter name="${k}" string="${isString}">${text}</｜DSML｜parameter>`;
    });
    return `<｜DSML｜invoke name="${c.name}">\n${params.join('\n')}\n</｜DSML｜invoke>`;
  });
  return `<｜DSML｜${block}>\n${invokes.join('\n')}\n</｜DSML｜${block}>`;
}

const args = (c: ToolCallPlan) => JSON.parse(c.arguments) as Record<string, unknown>;

/** Renders calls in a family's raw markup. */
const FAMILIES: Record<string, (calls: ToolCallPlan[], p: FaultParams) => string> = {
  deepseek: (calls, p) => renderDsml(calls, String(p.block)),
  // deepseekv3_detector.py
  deepseek_v3: (calls) =>
    `<｜tool▁calls▁begin｜>${calls
      .map(
        (c) =>
          `<｜tool▁call▁begin｜>function<｜tool▁sep｜>${c.name}\n\`\`\`json\n${c.arguments}\n\`\`\`<｜tool▁call▁end｜>`,
      )
      .join('')}<｜tool▁calls▁end｜>`,
  // hermes_detector.py / qwen25_detector.py
  qwen: (calls) =>
    calls
      .map((c) => `<tool_call>\n${JSON.stringify({ name: c.name, arguments: args(c) })}\n</tool_call>`)
      .join('\n'),
  // llama32_detector.py
  llama: (calls) =>
    `<|python_tag|>${calls.map((c) => JSON.stringify({ name: c.name, parameters: args(c) })).join('; ')}`,
  // mistral_detector.py
  mistral: (calls) =>
    `[TOOL_CALLS] ${JSON.stringify(calls.map((c) => ({ name: c.name, arguments: args(c) })))}`,
  // kimik2_detector.py
  kimi: (calls) =>
    `<|tool_calls_section_begin|>${calls
      .map(
        (c, i) =>
          `<|tool_call_begin|>functions.${c.name}:${i}<|tool_call_argument_begin|>${c.arguments}<|tool_call_end|>`,
      )
      .join('')}<|tool_calls_section_end|>`,
  // glm4_moe_detector.py
  glm: (calls) =>
    calls
      .map(
        (c) =>
          `<tool_call>${c.name}\n${Object.entries(args(c))
            .map(
              ([k, v]) =>
                `<arg_key>${k}</arg_key>\n<arg_value>${typeof v === 'string' ? v : JSON.stringify(v)}</arg_value>`,
            )
            .join('\n')}\n</tool_call>`,
      )
      .join('\n'),
  // gpt_oss_detector.py (harmony)
  'gpt-oss': (calls) =>
    calls
      .map(
        (c) =>
          `<|channel|>commentary to=functions.${c.name} <|constrain|>json<|message|>${c.arguments}<|call|>`,
      )
      .join(''),
  // gemma4_detector.py: TOOL_CALL_START "<|tool_call>", TOOL_CALL_END "<tool_call|>", strings between <|"|>.
  gemma4: (calls) =>
    calls
      .map(
        (c) =>
          `<|tool_call>call:${c.name}{${Object.entries(args(c))
            .map(([k, v]) => `${k}:${typeof v === 'string' ? `<|"|>${v}<|"|>` : JSON.stringify(v)}`)
            .join(',')}}<tool_call|>`,
      )
      .join(''),
  // No markup at all: the call as a bare JSON object in the text.
  json: (calls) => calls.map((c) => JSON.stringify({ name: c.name, arguments: args(c) })).join('\n'),
};
export const LEAK_FAMILIES = Object.keys(FAMILIES);

/** Calls in the raw markup of a family (LEAK_FAMILIES), for the faults that put markup where it does not belong. */
export function renderMarkup(family: string, calls: ToolCallPlan[], p: FaultParams): string {
  return FAMILIES[family]!(calls, p);
}

export const toolcallLeak: FaultDef = {
  name: 'toolcall_leak',
  summary:
    'tool calls come back as raw markup of `family` in content, finish_reason "stop", no tool_calls; mode required_ignored: tool_choice "required" runs to "length" without a call; mode none_ignored: tool_choice "none" still calls the tool',
  params: {
    family: {
      default: 'deepseek',
      help: `whose markup leaks: ${['deepseek', 'deepseek_v3', 'qwen', 'llama', 'mistral', 'kimi', 'glm', 'gpt-oss', 'gemma4', 'json'].join(', ')}`,
    },
    block: {
      default: 'function_calls',
      help: 'family deepseek, the DSML block: function_calls (DeepSeek-V3.2, also V4) or tool_calls (V4)',
    },
    mode: {
      default: 'leak',
      help: 'leak: markup in content; required_ignored: tool_choice "required" runs to "length" without a call; none_ignored: tool_choice "none" still calls the tool',
    },
  },
  validate(p: FaultParams) {
    if (p.mode !== 'leak' && p.mode !== 'required_ignored' && p.mode !== 'none_ignored')
      return `mode must be leak, required_ignored or none_ignored (got ${JSON.stringify(p.mode)})`;
    if (!LEAK_FAMILIES.includes(String(p.family)))
      return `family must be one of ${LEAK_FAMILIES.join(', ')} (got ${JSON.stringify(p.family)})`;
    return p.block === 'function_calls' || p.block === 'tool_calls'
      ? undefined
      : `block must be function_calls or tool_calls (got ${JSON.stringify(p.block)})`;
  },
  leakToolCalls(calls, p) {
    return p.mode === 'leak' ? FAMILIES[String(p.family)]!(calls, p) : undefined;
  },
  // A server that drops the request's tool_choice "none": the model, asked for the tool, calls it.
  callsDespiteNone(p) {
    return p.mode === 'none_ignored';
  },
  ignoresToolChoice(toolChoice, p) {
    return p.mode === 'required_ignored' && toolChoice === 'required';
  },
};
