// What a log event is known by across restarts, and the time a line carries of its own.
import { createHash } from 'node:crypto';

/**
 * A log event's identity: service, the line's byte offset and its text. A line read again after a restart has
 * the same ref whatever the file is now called (rename) or whichever copy it is read from (copytruncate), so
 * an event the journal already holds is not raised twice. Only lines that were in the file before it was
 * opened are checked against the journal (watcher.ts), so a new file repeating an old line is news.
 */
export function eventRef(service: string, offset: number, line: string): string {
  return createHash('sha1').update(`${service}\0${offset}\0${line}`).digest('hex').slice(0, 24);
}

// SGLang python/sglang/srt/utils.py configure_logger: format `[%(asctime)s{prefix}] %(message)s`,
// datefmt="%Y-%m-%d %H:%M:%S". vLLM vllm/logger.py: _FORMAT `%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d]`,
// _DATE_FORMAT = "%m-%d %H:%M:%S" (no year). Python's asctime is local time (time.localtime); ISO 8601 with a
// zone (uvicorn, JSON loggers) is taken as written.
const ISO_ZONED = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)/;
const FULL = /(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)/;
const SHORT = /(?:^|[^\d-])(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)/;

/** Unix ms of the timestamp near the start of a log line (its first 160 characters); NaN when it has none. */
export function lineTime(line: string, now: number): number {
  const head = line.slice(0, 160);
  const zoned = ISO_ZONED.exec(head);
  if (zoned) return Date.parse(zoned[0]);
  const full = FULL.exec(head);
  if (full) {
    const [, y, mo, d, h, mi, s] = full.map(Number) as number[];
    return new Date(y!, mo! - 1, d!, h!, mi!, s!).getTime();
  }
  const short = SHORT.exec(head);
  if (short) {
    const [, mo, d, h, mi, s] = short.map(Number) as number[];
    const year = new Date(now).getFullYear();
    const t = new Date(year, mo! - 1, d!, h!, mi!, s!).getTime();
    // A line from late December read in January belongs to last year.
    return t > now + 86_400_000 ? new Date(year - 1, mo! - 1, d!, h!, mi!, s!).getTime() : t;
  }
  return NaN;
}
