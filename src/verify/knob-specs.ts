// The knobs most steps share, written once: every step that sends completions has a max_tokens and a limit per
// request, under the same flags (--<step>.max-tokens, --<step>.timeout).
import type { KnobSpec } from './types.js';

/** --<step>.max-tokens: `max_tokens ${per}`. */
export function maxTokensKnob<K extends { maxTokens: number }>(per: string): KnobSpec<K> {
  return { key: 'maxTokens' as keyof K & string, flag: 'max-tokens', kind: 'int', help: `max_tokens ${per}` };
}

/** --<step>.timeout: the limit per request (or what `help` says it limits). */
export function timeoutKnob<K extends { timeoutMs: number }>(help = 'limit per request'): KnobSpec<K> {
  return { key: 'timeoutMs' as keyof K & string, flag: 'timeout', kind: 'duration', help };
}
