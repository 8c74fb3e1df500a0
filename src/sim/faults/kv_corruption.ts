// A KV transfer delivers the wrong blocks (a PD mix-up, a corrupted page): the request still finishes with
// HTTP 200 at full speed, but decode continues from someone else's cache and the answer is plausible and wrong.
// Everything else stays healthy: health, metrics, logs, tool calls. Only checking answers shows it.
import { nearMiss } from '../answers.js';
import type { FaultDef } from './types.js';

export const kvCorruption: FaultDef = {
  name: 'kv_corruption',
  engines: ['sglang', 'vllm'],
  summary:
    "decode returns plausible wrong answers for a `rate` fraction of requests (mode wrong: one character off; mixup: another request's answer)",
  params: {
    rate: { default: 1, help: 'the fraction of answers that come back wrong, in (0, 1]' },
    mode: {
      default: 'wrong',
      help: "wrong: one character off; mixup: another recent request's answer (a cross-request KV mix-up)",
    },
  },
  validate(p) {
    const r = Number(p.rate);
    if (!(Number.isFinite(r) && r > 0 && r <= 1))
      return `rate must be a number in (0, 1] (got ${JSON.stringify(p.rate)})`;
    return p.mode === 'wrong' || p.mode === 'mixup'
      ? undefined
      : `mode must be wrong or mixup (got ${JSON.stringify(p.mode)})`;
  },
  corruptAnswer(answer, recent, p) {
    if (Math.random() >= Number(p.rate)) return undefined;
    if (p.mode === 'mixup') {
      const other = [...recent].reverse().find((a) => a !== answer);
      if (other !== undefined) return other;
    }
    return nearMiss(answer);
  },
};
