// Streamed tool-call arguments that do not reassemble: the streaming parsers send each argument delta as the new
// text minus what they already sent (SGLang python/sglang/srt/function_call/base_format_detector.py
// parse_streaming_increment, `streamed_args_for_tool` and the argument diff; gigachat3_detector.py logs
// "Arguments overlap mismatch" when the prefix no longer matches). A diff taken against the wrong prefix repeats
// or drops a fragment, and only long arguments, streamed in many fragments, hit it. The non-streamed answer of the
// same request stays intact.
import type { FaultDef, FaultParams } from './types.js';

export const toolcallArgsCorrupt: FaultDef = {
  name: 'toolcall_args_corrupt',
  summary:
    'streamed tool-call arguments longer than `minBytes` reassemble wrong (a fragment repeated or dropped); non-streamed calls are intact',
  params: {
    minBytes: {
      default: 512,
      help: 'arguments at least this long are corrupted (shorter calls stream intact)',
    },
    mode: { default: 'repeat', help: 'repeat: one fragment is sent twice; drop: one fragment is never sent' },
  },
  validate(p: FaultParams) {
    if (p.mode !== 'repeat' && p.mode !== 'drop')
      return `mode must be repeat or drop (got ${JSON.stringify(p.mode)})`;
    const n = Number(p.minBytes);
    return Number.isInteger(n) && n >= 1
      ? undefined
      : `minBytes must be a positive integer (got ${JSON.stringify(p.minBytes)})`;
  },
  corruptStreamedArgs(fragments, p) {
    if (fragments.join('').length < Number(p.minBytes) || fragments.length < 3) return undefined;
    const at = Math.floor(fragments.length / 2);
    const out = [...fragments];
    if (p.mode === 'repeat') out.splice(at, 0, fragments[at]!);
    else out.splice(at, 1);
    return out;
  },
};
