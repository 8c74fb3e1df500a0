import { z } from 'zod';
import { parseDuration } from './duration-text.js';

// Re-exported for callers that also need the zod fields; the others import ./duration-text.js (no zod).
export { formatDuration, parseDuration } from './duration-text.js';

/** A zod field for durations written as text; the parsed value is milliseconds. */
export const duration = () =>
  z.unknown().transform((v, ctx): number => {
    const ms = typeof v === 'string' ? parseDuration(v) : undefined;
    if (ms === undefined) {
      ctx.addIssue({
        code: 'custom',
        message:
          v === undefined
            ? 'required: expected a duration like "30s"'
            : `expected a duration like "30s", got ${JSON.stringify(v)}`,
      });
      return z.NEVER;
    }
    return ms;
  });

/** A duration field with a default written the way a user would write it. */
export const durationOr = (fallback: string) => duration().default(parseDuration(fallback)!);
