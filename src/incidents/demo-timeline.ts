// The demo's timeline shows each incident capture with the bundle's path, so `npm start` shows the evidence
// being kept before the remediation restarts prefill.
import type { DemoExtension } from '../commands/demo.js';

export const incidentTimeline: DemoExtension = ({ daemon, timeline }) => {
  const journal = daemon.runtime?.watchdog?.journal;
  if (!journal) return undefined;
  return journal.subscribe((e) => {
    if (e.type === 'incident') timeline('incidents', `${e.target}: ${e.summary}`);
  });
};
