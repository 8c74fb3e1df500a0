// A reasoning model that answers and does not stop: after the right answer it emits `</think>` over and over
// (shape think_loop; a reasoning parser that already saw the end of thinking passes every later token through as
// content), or it goes back to thinking in a loop (shape reasoning_loop; the text streams in the reasoning field).
// Either way the request runs to max_tokens (finish_reason length) on every text answer. Reading it as "thinking
// needs more tokens" sends the operator to the wrong knob: the model (or its chat template) loops.
import type { FaultDef, FaultParams } from './types.js';

const SHAPES = ['think_loop', 'reasoning_loop'] as const;

export const reasoningRunaway: FaultDef = {
  name: 'reasoning_runaway',
  summary:
    'text answers run on after the right answer to max_tokens: a `</think>` loop in content (shape think_loop) or a reasoning loop (shape reasoning_loop)',
  engines: ['sglang', 'vllm'],
  params: {
    shape: { default: 'think_loop', help: `how the answer runs on: ${SHAPES.join(', ')}` },
  },
  validate(p: FaultParams) {
    return (SHAPES as readonly string[]).includes(String(p.shape))
      ? undefined
      : `shape must be one of ${SHAPES.join(', ')} (got ${JSON.stringify(p.shape)})`;
  },
  reasoningRunaway(p) {
    return p.shape === 'reasoning_loop' ? 'reasoning_loop' : 'think_loop';
  },
};
