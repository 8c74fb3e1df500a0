// Line formats by name (one file per format), and `auto`: the first line of a file decides.
import type { LogFormat } from '../../../config/schema.js';
import { cri } from './cri.js';
import { docker } from './docker.js';
import type { LineFormat } from './types.js';
import type { StructuredFormat, StructuredKeys } from './structured.js';
import type { StructuredOptions } from '../scanner.js';

export type { LineFormat, WrappedEntry } from './types.js';

export const LINE_FORMATS: Record<'cri' | 'docker', LineFormat> = { cri, docker };

/** The format of a file whose first line is `first` (without its `\n`): a wrapper that parses it, else plain. */
export function detectFormat(first: Buffer): 'plain' | 'cri' | 'docker' {
  for (const f of Object.values(LINE_FORMATS)) if (f.parse(first) !== null) return f.name;
  return 'plain';
}

/** The runtime wrapper a format names, if any (json and logfmt are records, not wrappers). */
export const wrapperOf = (format: LogFormat): 'cri' | 'docker' | undefined =>
  format === 'cri' || format === 'docker' ? format : undefined;

/**
 * How a source's engine lines carry records: a file of records (`format: json|logfmt`), records inside a wrapper or
 * the journal (`structured`), or, for `auto`, whatever each line reads as. Undefined: plain text.
 */
export function structuredOf(
  format: LogFormat,
  structured?: StructuredFormat | 'auto',
  keys?: StructuredKeys,
): StructuredOptions | undefined {
  const f =
    format === 'json' || format === 'logfmt'
      ? format
      : format === 'auto'
        ? (structured ?? 'auto')
        : structured;
  return f === undefined ? undefined : { format: f, ...(keys ? { keys } : {}) };
}
