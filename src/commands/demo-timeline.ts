// The demo's timeline of what the daemon decided: state transitions with their diagnosis, the critical log line
// that started a confirmation round, each incident capture with its bundle's path, and the remediation that
// brought the target back. One subscription to the events journal; the switch names every journal type, so a new
// type is a compile error here until the demo decides whether to show it.
import type { Journal, JournalEvent } from '../outputs/journal/journal.js';

/** The timeline column a journal event is shown under, or undefined when the demo leaves it out. */
export function timelineSource(e: JournalEvent): 'detector' | 'incidents' | 'traffic' | undefined {
  switch (e.type) {
    case 'transition':
    case 'diagnosis':
    case 'critical_log':
    case 'confirm':
    case 'critical_confirmed':
    case 'engine_stalled':
    case 'engine_crawling':
    case 'file_change':
    case 'node':
      return 'detector';
    case 'remediation':
      // A cooldown skip right after a restart is routine (the target needs a few probes to recover).
      return e.data.result === 'cooldown' ? undefined : 'detector';
    case 'incident':
      return 'incidents';
    case 'drain':
    case 'undrain':
      return 'traffic';
    case 'critical_unconfirmed':
    case 'probe_failing':
    case 'probe_recovered':
    case 'engine_progress':
    case 'rank_stalled':
    case 'remediation_pause':
      return undefined;
    case 'unknown':
      // The journal's file holds what other versions wrote too: a type this build does not know is not shown.
      return undefined;
    default:
      e satisfies never;
      return undefined;
  }
}

/** Prints the journal's events to the demo's timeline as they are appended; returns the unsubscribe function. */
export function journalTimeline(
  journal: Journal,
  timeline: (source: string, message: string) => void,
): () => void {
  return journal.subscribe((e) => {
    const source = timelineSource(e);
    if (source === undefined) return;
    timeline(source, `${e.target}: ${e.type === 'transition' ? 'state ' : ''}${e.summary}`);
  });
}
