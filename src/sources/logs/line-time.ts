// The time a log line carries of its own, in every stamp the engines and their libraries print:
//  - SGLang `[YYYY-MM-DD HH:MM:SS…] ` (python/sglang/srt/utils/common.py configure_logger, datefmt
//    "%Y-%m-%d %H:%M:%S"; some builds add milliseconds);
//  - vLLM `LEVEL MM-DD HH:MM:SS [file.py:N] ` (vllm/logger.py _DATE_FORMAT "%m-%d %H:%M:%S": no year);
//  - glog / absl / torch C++ `E1129 14:09:40.123456 4242 file.cc:42] ` (glog src/logging.cc LogMessage::Init,
//    absl/log/internal/log_format.cc FormatBoundedFields; torch c10/util/Logging.cpp and ProcessGroupNCCL's
//    `[rank1]:[E1129 14:09:40.426415540 ProcessGroupNCCL.cpp:629] `: MMDD, no year);
//  - ISO 8601 with or without a zone (uvicorn, JSON loggers, CRI/Docker runtimes) and Rust `tracing`'s default
//    `2026-08-10T14:00:01.123456Z  INFO target: …` (tracing-subscriber fmt, RFC 3339 in UTC).
// A stamp without a zone is the engine host's clock: replay reads it as UTC (its timeline prints UTC), the daemon
// as local time (Python's asctime is time.localtime). A stamp without a year takes the year it is given.

/** One stamp in the first STAMP_HEAD characters of a line; bounded alternatives, so the test is linear. */
export const LINE_STAMP =
  /\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?|(?<![\d-])\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,9})?|(?<![A-Za-z0-9])[IWEF]\d{4} \d\d:\d\d:\d\d(?:\.\d{1,9})?/;

/** How far into a line its stamp is looked for (container, process and logger prefixes come first). */
export const STAMP_HEAD = 160;

/** The stamp text of a line, if it has one near its start. */
export function stampText(line: string): string | undefined {
  return LINE_STAMP.exec(line.length > STAMP_HEAD ? line.slice(0, STAMP_HEAD) : line)?.[0];
}

const ISO = /^(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?(Z|[+-]\d\d:?\d\d)?$/;
const SHORT = /^(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?$/;
const GLOG = /^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?$/;

const msOf = (frac: string | undefined) => (frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, '0')));

/**
 * Unix ms of a stamp from stampText; NaN when it is none. `year` stands in for stamps without one; `utc` reads
 * zoneless stamps as UTC (else as this host's local time).
 */
export function stampToMs(stamp: string, year: number, utc = true): number {
  const at = (y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number) =>
    utc ? Date.UTC(y, mo - 1, d, h, mi, s, ms) : new Date(y, mo - 1, d, h, mi, s, ms).getTime();
  const iso = ISO.exec(stamp);
  if (iso) {
    const [, y, mo, d, h, mi, s, frac, zone] = iso;
    const ms = msOf(frac);
    if (zone === undefined) return at(+y!, +mo!, +d!, +h!, +mi!, +s!, ms);
    const base = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s!, ms);
    if (zone === 'Z') return base;
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    return base - sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
  }
  const short = SHORT.exec(stamp) ?? GLOG.exec(stamp);
  if (short) {
    const [, mo, d, h, mi, s, frac] = short;
    return at(year, +mo!, +d!, +h!, +mi!, +s!, msOf(frac));
  }
  return NaN;
}

/** Whether a stamp names its own year (`MM-DD` and glog stamps do not). */
export const stampHasYear = (stamp: string): boolean => /^\d{4}-/.test(stamp);

/**
 * A line's own time, for stamps without a year relative to `now`: a line from late December read in January
 * belongs to last year. NaN when the line has no stamp.
 */
export function lineTimeNear(line: string, now: number, utc: boolean): number {
  const stamp = stampText(line);
  if (stamp === undefined) return NaN;
  const year = utc ? new Date(now).getUTCFullYear() : new Date(now).getFullYear();
  const t = stampToMs(stamp, year, utc);
  if (stampHasYear(stamp) || !(t > now + 86_400_000)) return t;
  return stampToMs(stamp, year - 1, utc);
}
