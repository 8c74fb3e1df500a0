// The scanner's in-place view of a JSON record (formats/json-view.ts) must agree with the decoder: whenever it gives
// a view, decodeJson gives that record (its message alone, and its time); lines it cannot read so stay undecided
// (null) and take the full decode. Checked on hand-picked edge cases and on seeded random records.
import { describe, expect, it } from 'vitest';
import {
  decodeJson,
  DEFAULT_STRUCTURED_KEYS,
  type StructuredKeys,
} from '../../src/sources/logs/formats/structured.js';
import { emptyView, jsonView, viewKeys, viewTime } from '../../src/sources/logs/formats/json-view.js';
import { mulberry32 } from '../../src/sim/prng.js';

/** The view of `line` as the scanner takes it (latin1 chunk text), checked against decodeJson; the view or null. */
function check(
  line: string,
  keys: StructuredKeys = DEFAULT_STRUCTURED_KEYS,
): { message: string; time?: string } | null {
  const latin1 = Buffer.from(line, 'utf8').toString('latin1');
  // Inside a chunk: text before and after the line must not be read.
  const chunk = `{"message":"before"}\n${latin1}\n{"message":"after`;
  const p = chunk.indexOf('\n') + 1;
  const end = p + latin1.length;
  const v = jsonView(chunk, p, end, viewKeys(keys), emptyView());
  const rec = decodeJson(line.endsWith('\r') ? line.slice(0, -1) : line, keys);
  if (v === null) return null;
  const message = Buffer.from(chunk.slice(v.from, v.to), 'latin1').toString('utf8');
  const time = viewTime(chunk, v);
  expect(rec, line).not.toBeNull();
  expect(rec!.lines, line).toEqual([message]);
  expect(time, line).toBe(rec!.time);
  return { message, ...(time !== undefined ? { time } : {}) };
}

describe('jsonView', () => {
  it('reads flat records in place, with the time keys by priority; two message keys give no view', () => {
    expect(
      check('{"time":"2026-08-10T14:00:01Z","level":"INFO","message":"[x] Decode batch, #a: 1"}'),
    ).toEqual({
      message: '[x] Decode batch, #a: 1',
      time: '2026-08-10T14:00:01Z',
    });
    // Two message keys, or one twice: ambiguous (issue 37), decoded in full to say so.
    expect(check('{"msg":"low","message":"high"}')).toBeNull();
    expect(check('{"message":"first","message":"last"}')).toBeNull();
    expect(check('{"event":"e","ts":1723298401.5,"n":-1.5e3,"ok":true,"no":false,"x":null}')).toEqual({
      message: 'e',
      time: '2024-08-10T14:00:01.500Z',
    });
    expect(check(' {"message":"x"}')).toBeNull(); // decodeJson wants `{` first
    expect(check('{ "message" : "spaced" , "time" : "t" } ')).toEqual({ message: 'spaced', time: 't' });
    expect(check('{"message":"crlf"}\r')).toEqual({ message: 'crlf' });
    expect(check('{"message":"caf\u00e9 \u4e2d"}')).toEqual({ message: 'caf\u00e9 \u4e2d' });
    expect(
      check('{"body":"x","at":"2026-08-10T14:00:01Z"}', { message: ['body'], level: [], time: ['at'] }),
    ).toEqual({ message: 'x', time: '2026-08-10T14:00:01Z' });
  });

  it('leaves every line it cannot read in place to the decoder', () => {
    const undecided = [
      '{"message":"a\\nb"}', // an escape
      '{"message":"a\\"b"}',
      '{"message":"tab\there"}', // a raw control character (invalid JSON)
      '{"message":"x","exc_info":"Traceback"}', // a traceback field is appended
      '{"message":"x","fields":{"a":1}}', // nested
      '{"message":"x","list":[1]}',
      '{"message":1}', // no string message
      '{"msg":"x","message":null}', // the first key present decides, and is no string
      '{"level":"INFO"}', // no message
      '{"message":"{\\"message\\":\\"inner\\"}"}',
      '{"message":"{inner"}', // opens an object: may be a record of its own
      '{"message":"x"', // cut
      '{"message":"x"} trailing',
      '{"message":"x",}',
      '{"message":"x","n":01}',
      '{"message":"x","n":1.}',
      '{"message":"x","n":tru}',
      '{"message":"x" "y":1}',
      '{}',
      '[1,2]',
      'plain text',
    ];
    for (const line of undecided) expect(check(line), line).toBeNull();
  });

  it('agrees with decodeJson on seeded random records', () => {
    const rnd = mulberry32(27);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const keys = ['message', 'msg', 'event', 'time', 'ts', 'timestamp', 'level', 'other', 'exc_info'];
    const texts = ['', 'x', 'Decode batch', 'caf\u00e9', '{', 'a\\', 'q"', '\t', '\u001b[0m', ' ', '12'];
    const values = [
      () => JSON.stringify(pick(texts) + pick(texts)),
      () => `"${pick(texts)}"`, // raw: may be invalid
      () => String(Math.floor(rnd() * 2e9)),
      () => pick(['true', 'false', 'null', '-0', '1e5', '1.5', '01', '-', '{}', '[]', '"']),
    ];
    let viewed = 0;
    for (let n = 0; n < 4000; n++) {
      const fields: string[] = [];
      const count = Math.floor(rnd() * 5);
      for (let f = 0; f < count; f++) fields.push(`"${pick(keys)}"${pick(['', ' '])}:${pick(values)()}`);
      const line = `{${fields.join(pick([',', ', ', ',,']))}}${pick(['', ' ', '\r', 'x'])}`;
      const v = check(line);
      if (v !== null) viewed++;
      else {
        // Undecided is always allowed; but a plain flat record with a message must be read in place.
        if (/^\{"message":"[a-z ]*"\}$/.test(line)) expect.unreachable(line);
      }
    }
    expect(viewed).toBeGreaterThan(60);
  });
});
