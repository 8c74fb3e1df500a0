// Broken decoding behind a reasoning parser: the model's tokens are garbage, and the reasoning parser (SGLang
// python/sglang/srt/parser/reasoning_parser.py, --reasoning-parser) files them under reasoning_content because no
// end-of-thinking token ever comes, so `content` stays empty and the request runs to max_tokens. A check that reads
// "empty content, finish_reason length" as "a thinking model needs more tokens" blames the setting for garbage.
import type { FaultDef } from './types.js';

export const reasoningGarbage: FaultDef = {
  name: 'reasoning_garbage',
  summary:
    'text answers come as garbage in reasoning_content with empty content, until max_tokens (finish_reason length)',
  params: {},
  reasoningGarbage() {
    return true;
  },
};
