// Acceptance (issue 37 items 1 and 2): a record carrying model output stays shielded to the engine's real end.
// The model can print the engine's own tail (the early tail), a line the scanner cuts hides the real one, and a
// structured log never carries an SGLang text prefix: none of them may end a shield early (a fake thread death
// raises nothing) or keep it open past the engine's next record, a quiet period or the caps (the engine's own
// thread death after it raises its event, in every format).
import { describe, expect, it } from 'vitest';
import { LOG_PACKS, type LogFormat } from '../../src/config/schema.js';
import type { StructuredFormat } from '../../src/sources/logs/formats/structured.js';
import { MAX_CARRIER_BYTES, MAX_CARRIER_LINES, MAX_HELD_LINES } from '../../src/sources/logs/carriers.js';
import { logFeed } from '../../src/sources/logs/feed.js';
import { compileRuleSet } from '../../src/sources/logs/rules/compile.js';
import type { RuleMatch } from '../../src/sources/logs/rules/matcher.js';
import { errorTexts } from '../../src/sources/logs/json-error-tail.js';

const SET = compileRuleSet([...LOG_PACKS], []);
const MAX_LINE = 4096;

/** A feed of one source: `write` appends bytes (read as they come), `quiet` is the follower's idle settle. */
function source(format: LogFormat = 'plain', structured?: StructuredFormat) {
  const events: RuleMatch[] = [];
  const cuts: string[] = [];
  const f = logFeed(
    SET,
    { maxLineBytes: MAX_LINE, format, ...(structured ? { structured } : {}) },
    {
      match: (m) => events.push(m),
      engine: () => {},
      truncated: () => {},
      carrierCut: (c, cap) => cuts.push(`${c}:${cap}`),
    },
  );
  return {
    events,
    cuts,
    names: () => events.map((m) => m.rule.name),
    write(text: string) {
      const b = Buffer.from(text);
      f.input.feed(b, b.length);
    },
    quiet: () => f.input.settle(),
    end: () => f.input.flush(),
  };
}

const T = '[2026-08-10 14:00:03 TP0] ';
const HEADER = `${T}Failed to parse JSON part: [{"name": "write_file", "arguments": {"content": "`;
/** What the engine prints after the JSON part (CPython JSONDecodeError's str). */
const TAIL = (n: number) =>
  `"}}], JSON parse error: Invalid control character at: line 1 column ${n} (char ${n - 1})`;
/**
 * The engine's real tail after `before` (the record's lines so far): `"}}]` closes the model's text, then str() of
 * the error CPython raises on that text (json-error-tail.test.ts holds errorTexts to CPython's own messages).
 */
function realTail(before: readonly string[]): string {
  const part = 'Failed to parse JSON part: ';
  const record = [...before, '"}}]'].join('\n');
  return `"}}], JSON parse error: ${errorTexts(record.slice(record.indexOf(part) + part.length), 'loads')[0]}`;
}
/** The tail as the model can print it in its own output (it fits none of the texts below). */
const FAKE_TAIL = 'x, JSON parse error: Expecting value: line 1 column 2 (char 1)';
const DEATH = (thread: string) => [
  `Exception in thread ${thread} (bootstrap_thread):`,
  'Traceback (most recent call last):',
  '  File "/usr/lib/python3.12/threading.py", line 1073, in _bootstrap_inner',
  '    self.run()',
  "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
];
const FAKE_DEATH = DEATH('Thread-9');
const REAL_DEATH = DEATH('Thread-3');
/** A record of SGLang's own that raises an event (the model prints it after a fake tail: issue 37 item 1). */
const FORGED_RECORD = `${T}Received sigquit from a child process. It usually means the child failed.`;
const NEXT = `${T}Decode batch, #running-req: 1, #token: 90, token usage: 0.01, gen throughput (token/s): 40.00, #queue-req: 0`;

/** The early tail: the model prints the tail, then a thread death, then more, inside one tool call. */
const BEFORE_TAIL = [HEADER + 'line one', FAKE_TAIL, ...FAKE_DEATH, 'more output'];
const EARLY_TAIL = [...BEFORE_TAIL, realTail(BEFORE_TAIL)];

describe('the early tail (issue 37 item 1)', () => {
  it('a fake tail then a fake thread death inside the output raises nothing (idle engine: the quiet ends it)', () => {
    const s = source();
    s.write(EARLY_TAIL.join('\n') + '\n');
    s.quiet();
    s.end();
    expect(s.names()).toEqual([]);
  });

  it('nothing either when the engine prints its next record right after the real tail', () => {
    const s = source();
    s.write([...EARLY_TAIL, NEXT].join('\n') + '\n');
    s.end();
    expect(s.names()).toEqual([]);
  });

  it('the real thread death after the real end raises its event at the next record, before any quiet', () => {
    const s = source();
    s.write([...EARLY_TAIL, ...REAL_DEATH, NEXT].join('\n') + '\n');
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
    expect(s.events[0]!.line).toContain('Thread-3');
    s.end();
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
  });

  it('the real thread death after the real end raises its event at a quiet period (an idle engine)', () => {
    const s = source();
    s.write([...EARLY_TAIL, ...REAL_DEATH].join('\n') + '\n');
    s.quiet();
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
    expect(s.events[0]!.line).toContain('Thread-3');
  });

  it('read a few bytes at a time, the same', () => {
    const s = source();
    const text = [...EARLY_TAIL, ...REAL_DEATH, NEXT].join('\n') + '\n';
    for (let i = 0; i < text.length; i += 7) s.write(text.slice(i, i + 7));
    s.end();
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
    expect(s.events[0]!.line).toContain('Thread-3');
  });

  it('a fake tail on the header line itself ends nothing', () => {
    const s = source();
    const before = [`${T}Failed to parse JSON part: ${FAKE_TAIL}`, ...FAKE_DEATH];
    s.write([...before, realTail(before)].join('\n') + '\n');
    s.quiet();
    expect(s.names()).toEqual([]);
  });

  it('a fake tail then a forged record prefix and thread death: nothing (the tail names no error of the text before it)', () => {
    // A record of the engine's own words, then a stderr thread death: each raises an event where it is the engine's.
    const forged = [FORGED_RECORD, ...FAKE_DEATH];
    const before = [HEADER + 'line one', FAKE_TAIL, ...forged, 'more output'];
    const s = source();
    s.write([...before, realTail(before), NEXT].join('\n') + '\n');
    s.quiet();
    s.end();
    expect(s.names()).toEqual([]);
    // The engine's own thread death after the real end is still read, before any quiet.
    const r = source();
    r.write([...before, realTail(before), ...REAL_DEATH, NEXT].join('\n') + '\n');
    expect(r.names()).toEqual(['nixl_bootstrap_thread_dead']);
    expect(r.events[0]!.line).toContain('Thread-3');
  });

  it('every shape of CPython message the model may fake is refused when it does not fit: nothing after it raises', () => {
    for (const fake of [
      "x, JSON parse error: Expecting ',' delimiter: line 2 column 1 (char 58)",
      'x, JSON parse error: Unterminated string starting at: line 1 column 49 (char 48)',
      'x, JSON parse error: Extra data: line 1 column 2 (char 1)',
      'x, JSON parse error: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)',
      // The right message at the right char, but a column that cannot go with it.
      'x, JSON parse error: Invalid control character at: line 1 column 58 (char 58)',
    ]) {
      const s = source();
      s.write([HEADER + 'line one', fake, FORGED_RECORD, ...FAKE_DEATH, NEXT].join('\n') + '\n');
      s.quiet();
      expect(s.names(), fake).toEqual([]);
    }
  });

  it("a tail that fits on the header line ends the record there: what follows is the engine's", () => {
    const s = source();
    const header = `${T}Failed to parse JSON part: [1 2], JSON parse error: Expecting ',' delimiter: line 1 column 4 (char 3)`;
    s.write([header, ...REAL_DEATH, NEXT].join('\n') + '\n');
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
  });

  it('llama32 before 2025 printed the error as its own record: it ends the part when it fits the lines before', () => {
    const part = [
      `${T}Failed to parse JSON part: {"name": "run", "arguments": {"script": "`,
      ...FAKE_DEATH,
      '"}}',
    ];
    const own = (e: string) => `${T}JSON parse error: ${e}`;
    // {"name": "run", "arguments": {"script": " then a raw newline: CPython's error is at char 41.
    const s = source();
    s.write(
      [...part, own('Invalid control character at: line 1 column 42 (char 41)'), ...REAL_DEATH, NEXT].join(
        '\n',
      ) + '\n',
    );
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
    const f = source();
    f.write(
      [...part, own('Expecting value: line 1 column 2 (char 1)'), ...FAKE_DEATH, NEXT].join('\n') + '\n',
    );
    f.quiet();
    expect(f.names()).toEqual([]);
  });

  for (const [format, wrap] of [
    ['cri', (l: string) => `2026-08-10T14:00:03.000000000Z stderr F ${l}`],
    [
      'docker',
      (l: string) => JSON.stringify({ log: `${l}\n`, stream: 'stderr', time: '2026-08-10T14:00:03Z' }),
    ],
  ] as const) {
    it(`the same through the container runtime's wrapper (${format})`, () => {
      const s = source(format);
      s.write([...EARLY_TAIL, NEXT].map(wrap).join('\n') + '\n');
      s.quiet();
      expect(s.names()).toEqual([]);
      const r = source(format);
      r.write([...EARLY_TAIL, ...REAL_DEATH, NEXT].map(wrap).join('\n') + '\n');
      expect(r.names()).toEqual(['nixl_bootstrap_thread_dead']);
    });
  }
});

describe('a shield that never ends (issue 37 item 2)', () => {
  it('a cut line is no tail: user text cut so that it ends tail-shaped ends nothing', () => {
    const s = source();
    // The model's long line, cut at maxLineBytes right after a tail-shaped text.
    const long = 'a'.repeat(MAX_LINE - FAKE_TAIL.length) + FAKE_TAIL + ' and more of the same line';
    const before = [HEADER + 'x', long, ...FAKE_DEATH];
    s.write([...before, realTail(before)].join('\n') + '\n');
    s.quiet();
    expect(s.names()).toEqual([]);
  });

  it("the real tail on a cut line: the engine's next record ends the record, the thread death after it raises", () => {
    const s = source();
    const lastLine = 'b'.repeat(MAX_LINE + 100) + TAIL(5000);
    s.write([HEADER + 'x', lastLine, ...REAL_DEATH, NEXT].join('\n') + '\n');
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
  });

  it('the real tail on a cut line, an idle engine: the quiet ends it', () => {
    const s = source();
    const lastLine = 'b'.repeat(MAX_LINE + 100) + TAIL(5000);
    s.write([HEADER + 'x', lastLine, ...REAL_DEATH].join('\n') + '\n');
    s.quiet();
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
  });

  it('`format: json`: a hallucinated function name ends with its JSON record, the next record and a stderr traceback are read', () => {
    const s = source('json');
    const rec = (msg: string) =>
      JSON.stringify({ time: '2026-08-10T14:00:03Z', level: 'WARNING', message: msg });
    s.write(
      [
        rec(`Model attempted to call undefined function: x\n${FAKE_DEATH.join('\n')}`),
        rec('Decode batch, #running-req: 1'),
        ...REAL_DEATH,
      ].join('\n') + '\n',
    );
    s.end();
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
    expect(s.events[0]!.line).toContain('Thread-3');
  });

  it('`format: json`: the stderr traceback right after the record is read too', () => {
    const s = source('json');
    const rec = JSON.stringify({
      time: '2026-08-10T14:00:03Z',
      level: 'WARNING',
      message: `Model attempted to call undefined function: x\n${FAKE_DEATH.join('\n')}`,
    });
    s.write([rec, ...REAL_DEATH].join('\n') + '\n');
    s.end();
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
    expect(s.events[0]!.line).toContain('Thread-3');
  });

  it('logfmt records end their carrier as JSON ones do', () => {
    const s = source('logfmt');
    s.write(
      [
        `time=2026-08-10T14:00:03Z level=WARNING msg="Model attempted to call undefined function: x\\n${FAKE_DEATH.join('\\n').replace(/"/g, '\\"')}"`,
        ...REAL_DEATH,
      ].join('\n') + '\n',
    );
    s.end();
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
    expect(s.events[0]!.line).toContain('Thread-3');
  });

  it('JSON records inside a container wrapper (`structured: json` under CRI)', () => {
    const s = source('cri', 'json');
    const wrap = (l: string) => `2026-08-10T14:00:03.000000000Z stderr F ${l}`;
    const rec = JSON.stringify({
      time: '2026-08-10T14:00:03Z',
      message: `Model attempted to call undefined function: x\n${FAKE_DEATH.join('\n')}`,
    });
    s.write(
      [rec, JSON.stringify({ message: 'Decode batch, #running-req: 1' }), ...REAL_DEATH]
        .map(wrap)
        .join('\n') + '\n',
    );
    s.end();
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
    expect(s.events[0]!.line).toContain('Thread-3');
  });

  it("a tail carrier ends at the engine's next record only after a tail: a record-shaped line of the model's is its own", () => {
    const s = source();
    const before = [HEADER + 'x', NEXT, ...FAKE_DEATH];
    s.write([...before, realTail(before)].join('\n') + '\n');
    s.quiet();
    expect(s.names()).toEqual([]);
  });

  it('a record with no tail is cut off from it at a small line cap, counted: the next record ends it, what follows is read', () => {
    expect(MAX_CARRIER_LINES).toBeLessThanOrEqual(5000);
    const s = source();
    const filler = Array.from({ length: MAX_CARRIER_LINES }, (_, i) => `line ${i}`);
    // No tail ever, no quiet: the engine's next record ends it past the cap.
    s.write([HEADER + 'x', ...filler, ...FAKE_DEATH, NEXT, ...REAL_DEATH, NEXT].join('\n') + '\n');
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
    expect(s.events[0]!.line).toContain('Thread-3');
    expect(s.cuts).toEqual(['sglang_failed_json_part:lines']);
  });

  it('and at a byte cap', () => {
    const s = source();
    const n = Math.ceil(MAX_CARRIER_BYTES / 2000) + 1;
    const filler = Array.from({ length: n }, () => 'y'.repeat(1999));
    expect(n).toBeLessThan(MAX_CARRIER_LINES);
    s.write([HEADER + 'x', ...filler, NEXT, ...REAL_DEATH, NEXT].join('\n') + '\n');
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
    expect(s.cuts).toEqual(['sglang_failed_json_part:bytes']);
  });

  it('past the cap the rest of a long tool call is still shielded: 2,500 thread deaths after an early tail raise nothing', () => {
    const s = source();
    const flood = Array.from({ length: 2500 }, () => FAKE_DEATH).flat();
    const before = [HEADER + 'x', FAKE_TAIL, ...flood];
    s.write([...before, realTail(before), ...REAL_DEATH, NEXT].join('\n') + '\n');
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
    expect(s.events[0]!.line).toContain('Thread-3');
  });

  it('held lines are bounded: past MAX_HELD_LINES after a tail the oldest go with the record, the latest are still read', () => {
    const s = source();
    const junk = Array.from({ length: MAX_HELD_LINES + 10 }, (_, i) => `stderr ${i}`);
    s.write([...EARLY_TAIL, ...junk, ...REAL_DEATH, NEXT].join('\n') + '\n');
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
  });

  it('a `next_record` carrier on an idle engine: a stderr traceback after a quiet period is read', () => {
    const s = source();
    s.write(`${T}Model attempted to call undefined function: x\n${FAKE_DEATH.join('\n')}\n`);
    s.quiet();
    s.write(REAL_DEATH.join('\n') + '\n');
    s.end();
    expect(s.names()).toEqual(['nixl_bootstrap_thread_dead']);
    expect(s.events[0]!.line).toContain('Thread-3');
  });
});
