// One streamed assistant turn put back together from its chunks' deltas (text, reasoning, tool calls), within
// the answer's bounds: what a step keeps of an answer (to judge it, or to carry it into the next round) is
// never more than max_tokens can produce (answer-bounds.ts).
import { MAX_TOOL_CALLS } from './answer-bounds.js';

export interface ToolCallText {
  id?: string;
  name: string;
  arguments: string;
}

export interface Turn {
  content: string;
  toolCalls: ToolCallText[];
}

type Delta = Record<string, unknown>;
type ToolCallDelta = { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } };

export class TurnCollector {
  content = '';
  private readonly calls = new Map<number, ToolCallText>();
  private kept = 0;
  /** Set when the answer went past a bound: why, in a few words. */
  overflow: string | undefined;

  constructor(private readonly maxChars: number) {}

  /** One event's JSON text (events that are not JSON chunks are ignored). */
  event(data: string): void {
    if (this.overflow !== undefined) return;
    let chunk: { choices?: { delta?: Delta }[] };
    try {
      chunk = JSON.parse(data) as typeof chunk;
    } catch {
      return;
    }
    if (!Array.isArray(chunk?.choices)) return;
    for (const c of chunk.choices) {
      const d = c?.delta ?? {};
      // Reasoning as vLLM names it now (`reasoning`) or as SGLang does (`reasoning_content`); a vLLM that sent both
      // sent one text twice (src/sources/probes/reasoning-field.ts).
      const reasoning = typeof d.reasoning === 'string' ? d.reasoning : d.reasoning_content;
      for (const t of [d.content, reasoning]) {
        if (typeof t === 'string') this.content += this.take(t);
      }
      if (Array.isArray(d.tool_calls)) for (const tc of d.tool_calls as ToolCallDelta[]) this.toolCall(tc);
    }
  }

  get toolCalls(): ToolCallText[] {
    return [...this.calls.values()];
  }

  turn(): Turn {
    return { content: this.content, toolCalls: this.toolCalls };
  }

  private toolCall(tc: ToolCallDelta): void {
    const i = typeof tc?.index === 'number' ? tc.index : 0;
    let cur = this.calls.get(i);
    if (!cur) {
      if (this.calls.size >= MAX_TOOL_CALLS) {
        this.overflow = `more than ${MAX_TOOL_CALLS} tool calls in one answer`;
        return;
      }
      this.calls.set(i, (cur = { name: '', arguments: '' }));
    }
    if (typeof tc.id === 'string' && tc.id !== '') cur.id = this.take(tc.id);
    if (typeof tc.function?.name === 'string') cur.name += this.take(tc.function.name);
    if (typeof tc.function?.arguments === 'string') cur.arguments += this.take(tc.function.arguments);
  }

  /** The part of `text` that fits what may still be kept; past it, the turn overflows. */
  private take(text: string): string {
    const room = this.maxChars - this.kept;
    if (text.length <= room) {
      this.kept += text.length;
      return text;
    }
    this.kept = this.maxChars;
    this.overflow ??= `more than ${this.maxChars} characters of content`;
    return text.slice(0, Math.max(0, room));
  }
}
