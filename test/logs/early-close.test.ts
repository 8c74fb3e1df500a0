// Issue 37 (detection no slower): a traceback record's event goes out on its exception line, not when the next line
// or the follower's quiet period (idleFlushMs, 1 s) shows that no chained traceback follows. The quiet period was
// 1.26–1.65 s of every traceback → wedged. A chain printed after it is the same incident (no second event), and
// a traceback carried in a tool call's output stays shielded (issue 37 item 1): only the engine's own records close
// early.
import { describe, expect, it } from 'vitest';
import { LOG_PACKS } from '../../src/config/schema.js';
import { logFeed } from '../../src/sources/logs/feed.js';
import { compileRuleSet } from '../../src/sources/logs/rules/compile.js';
import type { RuleMatch } from '../../src/sources/logs/rules/matcher.js';

const SET = compileRuleSet([...LOG_PACKS], []);

/** One source's feed: `write` appends bytes as the follower reads them; no quiet period unless `quiet` is called. */
function source() {
  const events: RuleMatch[] = [];
  const members: RuleMatch[] = [];
  const f = logFeed(
    SET,
    { maxLineBytes: 4096, format: 'plain' },
    { match: (m) => events.push(m), member: (m) => members.push(m), engine: () => {}, truncated: () => {} },
  );
  return {
    events,
    members,
    critical: () => events.filter((e) => e.severity === 'critical').map((e) => e.rule.name),
    write(lines: string[]) {
      const b = Buffer.from(lines.map((l) => `${l}\n`).join(''));
      f.input.feed(b, b.length);
    },
    quiet: () => f.input.settle(),
    end: () => f.input.flush(),
  };
}

const T = '[2026-08-10 14:00:03 TP0] ';
const ASSERTION = "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?";
/** CPython threading.excepthook for the NIXL bootstrap thread (disaggregation/nixl/conn.py), as the simulator writes it. */
const FRAMES = [
  'Exception in thread Thread-3 (bootstrap_thread):',
  'Traceback (most recent call last):',
  '  File "/usr/lib/python3.11/threading.py", line 1045, in _bootstrap_inner',
  '    self.run()',
  '  File "/sgl-workspace/sglang/python/sglang/srt/disaggregation/nixl/conn.py", line 1352, in bootstrap_thread',
  '    waiting_req_bytes[0] == GUARD',
];

describe('a traceback record closes on its exception line (issue 37: detection latency)', () => {
  it('the bootstrap thread death is raised at its assertion line, with nothing after it and no quiet period', () => {
    const s = source();
    s.write(FRAMES);
    expect(s.events).toEqual([]);
    s.write([ASSERTION]);
    expect(s.critical()).toEqual(['nixl_bootstrap_thread_dead']);
    expect(s.events[0]!.line).toBe(`${FRAMES[0]}\n${ASSERTION}`);
    expect(s.events[0]!.fields).toMatchObject({ target: 'bootstrap_thread', exception: 'AssertionError' });
    // The quiet period and the end of input add nothing: the event is out once.
    s.quiet();
    s.end();
    expect(s.critical()).toEqual(['nixl_bootstrap_thread_dead']);
  });

  it("any thread's death is raised at its exception line (python_thread_exception)", () => {
    const s = source();
    s.write([
      'Exception in thread Thread-5 (forward_thread_func):',
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3.11/threading.py", line 1045, in _bootstrap_inner',
      '    self.run()',
      'RuntimeError: CUDA error: an illegal memory access was encountered',
    ]);
    expect(s.critical()).toEqual(['python_thread_exception']);
    expect(s.events[0]!.fields).toMatchObject({ thread: 'Thread-5', exception: 'RuntimeError' });
  });

  it("an SGLang record's traceback (unprefixed continuation) is raised at its column-0 exception line, not at a source line", () => {
    const s = source();
    s.write([
      `${T}Scheduler hit an exception: Traceback (most recent call last):`,
      '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2890, in run_scheduler_process',
      '    raise ValueError',
    ]);
    // `    raise ValueError` is exception-shaped, but not at the record's column: the record waits for its real end.
    expect(s.critical()).toEqual([]);
    s.write(['ValueError: bad batch size 0']);
    expect(s.critical()).toEqual(['sglang_scheduler_exception']);
    expect(s.events[0]!.fields).toMatchObject({ exception: 'ValueError', message: 'bad batch size 0' });
  });

  it('a chained traceback after the exception line is the same incident: no second event', () => {
    const s = source();
    s.write([...FRAMES, ASSERTION]);
    expect(s.critical()).toEqual(['nixl_bootstrap_thread_dead']);
    s.write([
      '',
      'During handling of the above exception, another exception occurred:',
      '',
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3.11/threading.py", line 1047, in _bootstrap_inner',
      'ConnectionResetError: [Errno 104] Connection reset by peer',
      `${T}Decode batch, #running-req: 1, #token: 90, token usage: 0.01, gen throughput (token/s): 40.00, #queue-req: 0`,
    ]);
    s.quiet();
    s.end();
    expect(s.critical()).toEqual(['nixl_bootstrap_thread_dead']);
    const inc = s.events[0]!.incident!;
    // The root cause stays the first error (issue 40).
    expect(inc.rootCause).toMatchObject({ exception: 'AssertionError' });
  });

  it("a thread death printed inside a tool call's output (a carrier record) raises nothing, early or late", () => {
    const s = source();
    s.write([
      `${T}Failed to parse JSON part: [{"name": "write_file", "arguments": {"content": "x`,
      ...FRAMES,
      ASSERTION,
    ]);
    expect(s.critical()).toEqual([]);
    s.write([`"}}], JSON parse error: Invalid control character at: line 1 column 70 (char 69)`]);
    s.quiet();
    s.end();
    expect(s.critical()).toEqual([]);
  });
});
