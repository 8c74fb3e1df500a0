// Requests past a prompt length hang before their first token while short ones are served: the shape of a
// chunked-prefill or long-context bug (SGLang splits prompts longer than --chunked-prefill-size into chunks the
// scheduler carries across batches, python/sglang/srt/managers/scheduler.py `chunked_req`; a KV transfer of that
// many blocks goes through the PD bootstrap the same way). Nothing is logged and nothing aborts: the request just
// never advances, so only a probe with a long prompt sees it. Disabling the fault releases the held requests.
import type { FaultDef, FaultParams } from './types.js';

export const longPromptHang: FaultDef = {
  name: 'long_prompt_hang',
  summary: 'requests with more than `above` prompt tokens never get a first token; shorter ones are served',
  params: {
    above: {
      default: 4096,
      help: 'prompt tokens (the simulator counts ≈ 4 characters a token) past which a request hangs',
    },
  },
  validate(p: FaultParams) {
    const n = Number(p.above);
    return Number.isInteger(n) && n >= 1
      ? undefined
      : `above must be a positive integer (got ${JSON.stringify(p.above)})`;
  },
  holdsPrompt(promptTokens, p) {
    return promptTokens > Number(p.above);
  },
  onDisable(ctl) {
    ctl.releaseStructured();
  },
};
