// The engine still makes tokens, at a crawl: every decode step (and prefill forward) takes `factor` times longer,
// so tokens per running request collapse against the engine's own baseline (a GPU throttled to its floor, NVLink
// falling back to PCIe, a DP rank dragging every collective). Unlike `slow`, the point is the collapse of the
// throughput the engine reports (SGLang `sglang:gen_throughput` and its `Decode batch` lines, vLLM's
// `vllm:generation_tokens_total` and `Avg generation throughput`), not a late first token.
import type { FaultDef } from './types.js';

export const crawl: FaultDef = {
  name: 'crawl',
  engines: ['sglang', 'vllm'],
  summary:
    'tokens per running request collapse `factor`-fold (each step takes that much longer); requests stay running',
  params: {
    factor: { default: 30, help: 'how many times slower each step is, 10 to 1000 (a crawl, not a slowdown)' },
  },
  validate(p) {
    const f = Number(p.factor);
    return Number.isFinite(f) && f >= 10 && f <= 1000 ? undefined : `factor must be a number from 10 to 1000`;
  },
  stepFactor(p) {
    return Number(p.factor);
  },
};
