// Parses step knobs given as text (CLI flags) into the values the steps use.
import { parseDuration } from '../config/duration.js';
import { parseLevels } from './throughput.js';
import { UsageError, type AnyStep, type KnobKind } from './types.js';

export function parseKnob(kind: KnobKind, text: string, flag: string): unknown {
  switch (kind) {
    case 'int': {
      const n = Number(text);
      if (!/^\d+$/.test(text.trim()) || n < 1)
        throw new UsageError(`${flag}: expected a positive integer, got ${JSON.stringify(text)}`);
      return n;
    }
    case 'ratio': {
      const n = Number(text);
      if (text.trim() === '' || !Number.isFinite(n) || n <= 0)
        throw new UsageError(`${flag}: expected a positive number, got ${JSON.stringify(text)}`);
      return n;
    }
    case 'duration': {
      const ms = parseDuration(text);
      if (ms === undefined)
        throw new UsageError(
          `${flag}: expected a duration like "22s" or "500ms", got ${JSON.stringify(text)}`,
        );
      return ms;
    }
    case 'levels':
      try {
        return parseLevels(text);
      } catch (err) {
        throw new UsageError(`${flag}: ${(err as Error).message}`);
      }
  }
}

export function knobFlag(step: AnyStep, flag: string): string {
  return `--${step.flagPrefix}.${flag}`;
}

/** The default of a knob written as a user would write it, for --help. */
export function knobDefaultText(kind: KnobKind, value: unknown): string {
  if (kind === 'duration') {
    const ms = value as number;
    return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
  }
  if (kind === 'levels')
    return (value as { concurrency: number; n: number }[]).map((l) => `${l.concurrency}x${l.n}`).join(',');
  return String(value);
}
