// Knob constructors for the steps' knob tables (types.ts KnobTable): one line per knob with its flag, default and
// help. The knobs most steps share are written once: every step that sends completions has a max_tokens and a
// limit per request, under the same flags (--<step>.max-tokens, --<step>.timeout).
import type { KnobSpec } from './types.js';

/** A positive integer: --<step>.<flag> N. */
export function intKnob(flag: string, value: number, help: string): KnobSpec<number> {
  return { flag, kind: 'int', default: value, help };
}

/** A duration ("22s", "500ms"), kept in ms. */
export function durationKnob(flag: string, ms: number, help: string): KnobSpec<number> {
  return { flag, kind: 'duration', default: ms, help };
}

/** A positive number. */
export function ratioKnob(flag: string, value: number, help: string): KnobSpec<number> {
  return { flag, kind: 'ratio', default: value, help };
}

/** Load levels ("1,4,16" or "1x3,32x64"). */
export function levelsKnob<V>(flag: string, value: V, help: string): KnobSpec<V> {
  return { flag, kind: 'levels', default: value, help };
}

/** --<step>.max-tokens: `max_tokens ${per}`. */
export function maxTokensKnob(value: number, per: string): KnobSpec<number> {
  return intKnob('max-tokens', value, `max_tokens ${per}`);
}

/** --<step>.timeout: the limit per request (or what `help` says it limits). */
export function timeoutKnob(ms: number, help = 'limit per request'): KnobSpec<number> {
  return durationKnob('timeout', ms, help);
}
