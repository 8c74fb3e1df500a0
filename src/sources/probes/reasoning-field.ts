// The reasoning channel under both of its names. vLLM renamed `reasoning_content` to `reasoning` (RFC
// vllm-project/vllm#27755, PR #27752, Nov 2025): at vllm/entrypoints/openai/engine/protocol.py @d7e5252 (class
// DeltaMessage) `reasoning` is the field and `reasoning_content` a deprecated copy of it, and PR #33402 (merged
// 2026-01-30) removed the copy, so current vLLM streams `reasoning` alone (the non-streaming ChatMessage likewise).
// SGLang keeps `reasoning_content` on DeltaMessage and ChatMessage (python/sglang/srt/entrypoints/openai/protocol.py
// @004c82e). A vLLM between the two sends both with one text, so the new name wins and the old is read only when
// the new one is absent: the same text is never counted twice.

/** The reasoning text of a delta or message object, under either name; undefined when it carries none. */
export function reasoningText(o: Record<string, unknown>): string | undefined {
  if (typeof o.reasoning === 'string') return o.reasoning;
  if (typeof o.reasoning_content === 'string') return o.reasoning_content;
  return undefined;
}
