// Real journal files for the tests, written by systemd-journal-remote from the journal export format
// (systemd.io/JOURNAL_EXPORT_FORMATS): the same bytes journalctl reads on a host, no mock in between.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export const JOURNAL_REMOTE = '/lib/systemd/systemd-journal-remote';

export interface TestEntry {
  message: string;
  unit: string;
  /** Unix ms. */
  time: number;
}

/** Appends entries to `file` (created if missing; the name must end in .journal). */
export function writeJournal(file: string, entries: TestEntry[]): void {
  if (!existsSync(JOURNAL_REMOTE)) {
    throw new Error(`${JOURNAL_REMOTE} is missing: install the systemd-journal-remote package`);
  }
  mkdirSync(dirname(file), { recursive: true });
  const input = entries
    .map((e) => {
      if (e.message.includes('\n'))
        throw new Error('a test message with a newline needs the binary field form');
      return (
        `__REALTIME_TIMESTAMP=${e.time * 1000}\n_BOOT_ID=0123456789abcdef0123456789abcdef\n` +
        `_SYSTEMD_UNIT=${e.unit}\nPRIORITY=6\nMESSAGE=${e.message}\n\n`
      );
    })
    .join('');
  const r = spawnSync(JOURNAL_REMOTE, [`--output=${file}`, '-'], {
    input,
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (r.status !== 0) {
    throw new Error(`systemd-journal-remote failed (${r.status ?? r.signal}): ${r.stderr ?? r.error}`);
  }
}
