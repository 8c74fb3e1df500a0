// A tool call swallowed into the reasoning channel: the model writes its call inside the thinking, so the reasoning
// parser files the markup under the reasoning field and the tool parser never sees it — no tool_calls, content
// empty, finish_reason "stop" (the client's agent waits for a call that never comes). The markup is the family's
// own (./toolcall_leak.ts renders each as its parser expects); the reasoning field is the engine's (vLLM
// `reasoning`, SGLang `reasoning_content`).
import { LEAK_FAMILIES, renderMarkup } from './toolcall_leak.js';
import type { FaultDef, FaultParams } from './types.js';

export const toolcallInReasoning: FaultDef = {
  name: 'toolcall_in_reasoning',
  summary:
    'tool calls come back as raw markup of `family` in the reasoning field, content empty, no tool_calls, finish_reason "stop"',
  engines: ['sglang', 'vllm'],
  params: {
    family: { default: 'qwen', help: `whose markup: ${LEAK_FAMILIES.join(', ')}` },
    block: {
      default: 'function_calls',
      help: 'family deepseek, the DSML block: function_calls or tool_calls',
    },
  },
  validate(p: FaultParams) {
    return LEAK_FAMILIES.includes(String(p.family))
      ? undefined
      : `family must be one of ${LEAK_FAMILIES.join(', ')} (got ${JSON.stringify(p.family)})`;
  },
  callsInReasoning(calls, p) {
    return renderMarkup(String(p.family), calls, p);
  },
};
