// @ts-check
// The JSON-format file of bench:ingest: a plain log as JSON records ({"time","level","message"}), one per line, the
// time taken from the line's own stamp (the last one before it for unstamped lines). Read with --format json.
import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';

/**
 * @param {string} from
 * @param {string} to
 */
export async function writeJsonLog(from, to) {
  const out = createWriteStream(to);
  let last = '2026-07-10T12:00:00Z';
  let batch = [];
  for await (const line of createInterface({ input: createReadStream(from), crlfDelay: Infinity })) {
    const m = /^\[(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)/.exec(line);
    if (m) last = `${m[1]}T${m[2]}Z`;
    batch.push(JSON.stringify({ time: last, level: 'INFO', message: line }));
    if (batch.length >= 4096) {
      if (!out.write(`${batch.join('\n')}\n`))
        await new Promise((r) => out.once('drain', () => r(undefined)));
      batch = [];
    }
  }
  if (batch.length > 0) out.write(`${batch.join('\n')}\n`);
  await new Promise((r) => out.end(r));
}
