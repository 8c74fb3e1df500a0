// What a log event is known by across restarts, and the time a line carries of its own.
import { createHash } from 'node:crypto';
import { lineTimeNear } from './line-time.js';

/**
 * A log event's identity: service, the line's byte offset and its text. A line read again after a restart has
 * the same ref whatever the file is now called (rename) or whichever copy it is read from (copytruncate), so
 * an event the journal already holds is not raised twice. Only lines that were in the file before it was
 * opened are checked against the journal (watcher.ts), so a new file repeating an old line is news.
 */
export function eventRef(service: string, offset: number, line: string): string {
  return createHash('sha1').update(`${service}\0${offset}\0${line}`).digest('hex').slice(0, 24);
}

/**
 * Unix ms of the timestamp near the start of a log line, read as this host's local time when it names no zone
 * (Python's asctime is time.localtime); NaN when it has none. Every stamp line-time.ts knows is read.
 */
export function lineTime(line: string, now: number): number {
  return lineTimeNear(line, now, false);
}
