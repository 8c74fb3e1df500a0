// The demo's timeline shows what the detector decided: state transitions with their diagnosis, the critical
// log line that started a confirmation round, and the remediation that brought the target back.
import type { DemoExtension } from '../commands/demo.js';

const SHOWN = new Set([
  'transition',
  'diagnosis',
  'critical_log',
  'confirm',
  'critical_confirmed',
  'engine_stalled',
  'remediation',
  'file_change',
]);

export const detectorTimeline: DemoExtension = ({ daemon, timeline }) => {
  const journal = daemon.runtime?.watchdog?.journal;
  if (!journal) return undefined;
  return journal.subscribe((e) => {
    // A cooldown skip right after a restart is routine (the target needs a few probes to recover).
    if (e.type === 'remediation' && e.data?.result === 'cooldown') return;
    if (SHOWN.has(e.type))
      timeline('detector', `${e.target}: ${e.type === 'transition' ? 'state ' : ''}${e.summary}`);
  });
};
