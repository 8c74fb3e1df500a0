// The log source kinds: a new kind is one file beside this one plus one row here. The row's `key` is the
// config key that selects it (schema.ts keeps the keys exclusive), so the watcher never branches on a kind.
import type { LogSourceConfig } from '../../../config/schema.js';
import type { LogSourceKindDef, LogSourceKinds } from '../source.js';
import { FILE_SOURCE } from './file.js';
import { JOURNAL_SOURCE } from './journal.js';

export const LOG_SOURCE_KINDS = {
  file: FILE_SOURCE,
  journal: JOURNAL_SOURCE,
} as const satisfies LogSourceKinds;

/** The closed set of kinds the daemon ships; a test table (LogWatcherOptions.kinds) may add its own. */
export type LogSourceKind = keyof typeof LOG_SOURCE_KINDS;

/** The kind a config entry names (the first row whose key it sets); undefined when none does. */
export function logSourceKind<K extends string>(
  src: LogSourceConfig,
  kinds: Readonly<Record<K, LogSourceKindDef>>,
): K | undefined {
  return (Object.keys(kinds) as K[]).find((k) => src[kinds[k].key] !== undefined);
}
