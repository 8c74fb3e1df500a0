// The tool-call parser fails and the raw DSML markup lands in `content` with no tool_calls (§6, sglang #40236).
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

export const toolcallLeak: FaultDef = {
  name: 'toolcall_leak',
  summary: 'tool calls come back as raw DSML markup in content, finish_reason "stop", no tool_calls',
  params: {
    block: {
      default: 'function_calls',
      help: 'the DSML block: function_calls (DeepSeek-V3.2, also V4) or tool_calls (V4)',
    },
  },
  validate(p: FaultParams) {
    return p.block === 'function_calls' || p.block === 'tool_calls'
      ? undefined
      : `block must be function_calls or tool_calls (got ${JSON.stringify(p.block)})`;
  },
  leakToolCalls(calls, p) {
    return renderDsml(calls, String(p.block));
  },
};
