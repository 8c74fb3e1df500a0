// Line formats by name (one file per format), and `auto`: the first line of a file decides.
import type { LogFormat } from '../../../config/schema.js';
import { cri } from './cri.js';
import { docker } from './docker.js';
import type { LineFormat } from './types.js';

export type { LineFormat, WrappedEntry } from './types.js';

export const LINE_FORMATS: Record<'cri' | 'docker', LineFormat> = { cri, docker };

/** The format of a file whose first line is `first` (without its `\n`): a wrapper that parses it, else plain. */
export function detectFormat(first: Buffer): Exclude<LogFormat, 'auto'> {
  for (const f of Object.values(LINE_FORMATS)) if (f.parse(first) !== null) return f.name;
  return 'plain';
}
