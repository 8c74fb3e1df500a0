// The journal source kind: the systemd journal through journalctl (JournalFollower), its cursor saved in
// place of an offset. Entries are lines of one record stream, so multi-line rules see a traceback whole.
import { JournalFollower } from '../journald.js';
import type { LogSource, LogSourceContext, LogSourceKindDef } from '../source.js';

export function journalSource({ src, cursors, now, journal, hooks }: LogSourceContext): LogSource {
  // The schema makes `journal` present whenever this kind is selected (by its key).
  const j = src.journal!;
  const units = j.unit === undefined ? [] : Array.isArray(j.unit) ? j.unit : [j.unit];
  const name = `journal:${[...units, ...(j.match ?? [])].join(',')}`;
  const line = hooks.lines(name, 'unit');
  return new JournalFollower({
    journal: j,
    from: src.from,
    maxCatchUpBytes: src.maxCatchUpBytes,
    cursors,
    key: `${src.service}|${name}|${j.directory ?? j.file ?? ''}`,
    now,
    ...journal,
    onEntry: (e) => line({ text: e.text, time: e.time, stream: e.unit }),
    onError: (reason, message) => hooks.readError(reason, name, message),
    onSaveError: (message) => hooks.saveError(message),
    // Message bytes, as a file's skip counts file bytes: the same counter, entries only in the log line.
    onSkip: (entries, bytes) => hooks.skipped(name, bytes, entries),
  });
}

export const JOURNAL_SOURCE = {
  key: 'journal',
  state: 'journal_cursors',
  create: journalSource,
} as const satisfies LogSourceKindDef;
