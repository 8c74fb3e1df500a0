// Acceptance (issue 27, items 1, 2, 4): an engine death is one event carrying its chain (members, absorbed count)
// and its root cause (the final exception of its traceback, chained tracebacks included); incidents are grouped by
// time, not by line count; one request's line repeated in a loop is its own event; user text printed unquoted on
// continuation lines raises nothing, and a real death after it is still raised.
import { describe, expect, it } from 'vitest';
import { LOG_PACKS } from '../../src/config/schema.js';
import { PACKS } from '../../src/sources/logs/packs/index.js';
import { compileRuleSet } from '../../src/sources/logs/rules/compile.js';
import { ROOT_CAUSE_WAIT_LINES } from '../../src/sources/logs/rules/incidents.js';
import type { RuleMatch } from '../../src/sources/logs/rules/matcher.js';
import { rootCauseText } from '../../src/core/signals.js';
import type { ClassifierConfig } from '../../src/core/memory.js';
import { detectSchema } from '../../src/config/schema.js';
import { Run } from '../detect/run.js';
import { ChunkScanner } from '../../src/sources/logs/scanner.js';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';

function scan(text: string, chunk = 1 << 20): { events: RuleMatch[]; members: RuleMatch[] } {
  const events: RuleMatch[] = [];
  const members: RuleMatch[] = [];
  const s = new ChunkScanner(compileRuleSet([...LOG_PACKS], []), 65_536, {
    match: (m) => events.push(m),
    member: (m) => members.push(m),
    engine: () => {},
    truncated: () => {},
  });
  const buf = Buffer.from(text);
  for (let i = 0; i < buf.length; i += chunk) {
    const part = buf.subarray(i, Math.min(buf.length, i + chunk));
    s.feed(part, part.length);
  }
  s.flush();
  return { events, members };
}
const detectCfg: ClassifierConfig = {
  detect: detectSchema.parse({ stallAfter: '10s', confirmInterval: '5s' }),
  hops: ['router'],
  probes: { chat: { kind: 'chat' } },
};
const critical = (ms: RuleMatch[]) => ms.filter((m) => m.severity === 'critical');
const names = (ms: RuleMatch[]) => ms.map((m) => m.rule.name);

// SGLang managers/scheduler.py run_scheduler_process: logger.error(f"Scheduler hit an exception: {traceback}"), one
// record whose traceback lines carry no prefix; then tokenizer_manager.py's subprocess watchdog and the SIGQUIT
// handler (format strings as in test/fixtures/logs/rule-fixtures.ts).
const schedulerDeath = (t: string, exception: string[]) =>
  [
    `[2026-08-10 ${t} TP0] Scheduler hit an exception: Traceback (most recent call last):`,
    '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2890, in run_scheduler_process',
    '    scheduler.event_loop_overlap()',
    '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 1021, in event_loop_overlap',
    '    batch_result = self.run_batch(batch)',
    ...exception,
    '',
    `[2026-08-10 ${t}] Subprocess scheduler_0 (pid=3417555) crashed with exit code -3. Triggering SIGQUIT for cleanup...`,
    `[2026-08-10 ${t}] SIGQUIT received. signum=None, frame=None. It usually means one child failed.`,
  ].join('\n');

const CUDA_IMA = 'torch.AcceleratorError: CUDA error: an illegal memory access was encountered';

describe('an engine death is one event with its chain and root cause', () => {
  it('SGLang scheduler death: one critical, the final exception in its fields, the chain absorbed and counted', () => {
    const { events, members } = scan(`${schedulerDeath('14:00:01', [CUDA_IMA])}\n`);
    const crit = critical(events);
    expect(names(crit)).toEqual(['sglang_scheduler_exception']);
    expect(crit[0]!.fields).toMatchObject({
      exception: 'torch.AcceleratorError',
      message: 'CUDA error: an illegal memory access was encountered',
    });
    const inc = crit[0]!.incident!;
    expect(inc.rootCause).toEqual({
      exception: 'torch.AcceleratorError',
      message: 'CUDA error: an illegal memory access was encountered',
      rule: 'sglang_scheduler_exception',
    });
    expect(inc.absorbed).toBe(2);
    expect(inc.members.map((m) => m.rule)).toEqual([
      'sglang_scheduler_exception',
      'sglang_subprocess_crashed',
      'sglang_sigquit_running',
    ]);
    expect(inc.members[0]!.process).toBe('TP0');
    expect(names(members)).toEqual(['sglang_subprocess_crashed', 'sglang_sigquit_running']);
  });

  it('SGLang decode OOM: the scheduler record reports the OutOfMemoryError as its root cause', () => {
    const oom =
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.02 GiB is free.';
    const { events } = scan(`${schedulerDeath('14:00:01', [oom])}\n`);
    const crit = critical(events);
    expect(names(crit)).toEqual(['sglang_scheduler_exception']);
    expect(crit[0]!.incident!.rootCause).toMatchObject({
      exception: 'torch.OutOfMemoryError',
      message: expect.stringContaining('CUDA out of memory. Tried to allocate 2.00 GiB'),
    });
  });

  it('when `Subprocess … crashed` comes first, the traceback after it becomes the root cause of that event', () => {
    const text = [
      '[2026-08-10 14:00:01] Subprocess scheduler_0 (pid=3417555) crashed with exit code -3. Triggering SIGQUIT for cleanup...',
      '[2026-08-10 14:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2890, in run_scheduler_process',
      CUDA_IMA,
      '[2026-08-10 14:00:02] SIGQUIT received. signum=None, frame=None. It usually means one child failed.',
    ].join('\n');
    const { events } = scan(`${text}\n`);
    expect(names(critical(events))).toEqual(['sglang_subprocess_crashed']);
    expect(events[0]!.incident!.rootCause?.exception).toBe('torch.AcceleratorError');
    expect(events[0]!.incident!.absorbed).toBe(2);
  });

  it('when `Subprocess … crashed` comes first, its event reaches the sink already naming the root cause, and the journal entry shows it', () => {
    // What the daemon keeps of an event (the journal's critical_log entry, the evidence behind the alert's cause) is
    // read when the sink gets it, so the root cause must be there at that moment, not set on the incident later.
    const text = [
      '[2026-08-10 14:00:01] Subprocess scheduler_0 (pid=3417555) crashed with exit code -3. Triggering SIGQUIT for cleanup...',
      '[2026-08-10 14:00:01] SIGQUIT received. signum=None, frame=None. It usually means one child failed.',
      '[2026-08-10 14:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2890, in run_scheduler_process',
      '    scheduler.event_loop_overlap()',
      CUDA_IMA,
      '',
      '[2026-08-10 14:00:02] Received sigquit from a child process. It usually means the child failed.',
      '[2026-08-10 14:00:02] Dumping requests before crash. crash_dump_folder=None',
    ].join('\n');
    const atEmit: (string | undefined)[] = [];
    const s = new ChunkScanner(compileRuleSet([...LOG_PACKS], []), 65_536, {
      match: (m) =>
        atEmit.push(m.severity === 'critical' ? `${m.rule.name}|${rootCauseText(m.incident)}` : undefined),
      engine: () => {},
      truncated: () => {},
    });
    const buf = Buffer.from(`${text}\n`);
    s.feed(buf, buf.length);
    s.flush();
    expect(atEmit).toEqual([
      'sglang_subprocess_crashed|torch.AcceleratorError: CUDA error: an illegal memory access was encountered',
    ]);
    // The detector's critical_log event (what the watchdog journals) carries it.
    const r = new Run(detectCfg);
    const step = r.log({
      severity: 'critical',
      rule: 'sglang_subprocess_crashed',
      class: 'engine_death',
      service: 'decode',
      line: text.split('\n')[0]!,
      incident: {
        members: [],
        absorbed: 2,
        rootCause: {
          exception: 'torch.AcceleratorError',
          message: 'CUDA error: an illegal memory access was encountered',
          rule: 'sglang_scheduler_exception',
        },
      },
    });
    expect(step.events.find((e) => e.type === 'critical_log')).toMatchObject({
      rootCause: 'torch.AcceleratorError: CUDA error: an illegal memory access was encountered',
    });
  });

  it('a chain head with no traceback after it is raised once the input goes quiet, and events after it keep file order', () => {
    const text = [
      '[2026-08-10 14:00:01] Subprocess scheduler_0 (pid=1) crashed with exit code -9. Triggering SIGQUIT for cleanup...',
      '[2026-08-10 14:00:01] Some requests timed out when bootstrapping',
    ].join('\n');
    const order: string[] = [];
    const s = new ChunkScanner(compileRuleSet([...LOG_PACKS], []), 65_536, {
      match: (m) => order.push(m.rule.name),
      engine: () => {},
      truncated: () => {},
    });
    const buf = Buffer.from(`${text}\n`);
    s.feed(buf, buf.length);
    // Still waiting for a traceback: nothing out yet, the warning queued behind the chain head.
    expect(order).toEqual([]);
    s.settle();
    expect(order).toEqual(['sglang_subprocess_crashed', 'sglang_bootstrap_timeout_warning']);
  });

  it(`a chain head waits at most ${ROOT_CAUSE_WAIT_LINES} lines for a traceback, then goes out without one`, () => {
    const filler = Array.from(
      { length: ROOT_CAUSE_WAIT_LINES + 1 },
      (_, i) => `[2026-08-10 14:00:01] line ${i}`,
    );
    const order: string[] = [];
    const s = new ChunkScanner(compileRuleSet([...LOG_PACKS], []), 65_536, {
      match: (m) => order.push(`${m.rule.name}|${m.incident?.rootCause?.exception ?? '-'}`),
      engine: () => {},
      truncated: () => {},
    });
    const late = [
      '[2026-08-10 14:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):',
      CUDA_IMA,
      '[2026-08-10 14:00:02] done',
    ];
    const text = [
      '[2026-08-10 14:00:01] Subprocess scheduler_0 (pid=1) crashed with exit code -9. Triggering SIGQUIT for cleanup...',
      ...filler,
      ...late,
    ].join('\n');
    const buf = Buffer.from(`${text}\n`);
    s.feed(buf, buf.length);
    // Raised without a root cause once the wait ran out; the late traceback joins the same incident (one event).
    expect(order).toEqual(['sglang_subprocess_crashed|-']);
  });

  it("SGLang's SIGCHLD line and a non-zero rank's terminated scheduler join the death chain: one event, with its root cause", () => {
    const text = [
      '[2026-08-10 14:00:01] Child process unexpectedly failed with exitcode=9. pid=3417555',
      "[2026-08-10 14:00:01] Child process pid=3417555 frame=<frame at 0x7f3a, file '/usr/lib/python3.12/selectors.py'>",
      '[2026-08-10 14:00:01] Subprocess scheduler_0 (pid=3417555) crashed with exit code -9. Triggering SIGQUIT for cleanup...',
      '[2026-08-10 14:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2890, in run_scheduler_process',
      CUDA_IMA,
      '',
      '[2026-08-10 14:00:02] Scheduler or DataParallelController 3417555 terminated with -9',
    ].join('\n');
    const { events } = scan(`${text}\n`);
    expect(names(critical(events))).toEqual(['sglang_child_process_failed']);
    expect(events[0]!.fields).toMatchObject({ code: '9', pid: '3417555' });
    expect(events[0]!.incident!.rootCause?.exception).toBe('torch.AcceleratorError');
    expect(events[0]!.incident!.members.map((m) => m.rule)).toEqual([
      'sglang_child_process_failed',
      'sglang_subprocess_crashed',
      'sglang_scheduler_exception',
      'sglang_scheduler_terminated',
    ]);
  });

  it('a chained traceback is one event, raised on its first exception line; the chain fills its incident', () => {
    const p = '(EngineCore_DP0 pid=413) ERROR 08-10 12:30:57 [core.py:710] ';
    const text = [
      'EngineCore encountered a fatal error.',
      'Traceback (most recent call last):',
      '  File "/vllm/v1/executor/multiproc_executor.py", line 240, in collective_rpc',
      '    result = get_response(w, dequeue_timeout)',
      'TimeoutError',
      '',
      'During handling of the above exception, another exception occurred:',
      '',
      'Traceback (most recent call last):',
      '  File "/vllm/v1/engine/core.py", line 701, in run_engine_core',
      'TimeoutError: RPC call to execute_model timed out.',
    ]
      .map((l) => p + l)
      .join('\n');
    const { events } = scan(
      `${text}\n(APIServer pid=2) INFO 08-10 12:30:58 [launcher.py:80] Shutting down\n`,
    );
    expect(names(critical(events))).toEqual(['vllm_engine_core_fatal']);
    // The event went out on the first exception line (its root cause, issue 40), not a line or a quiet period
    // later (issue 37: detection latency); the chained exception after it is the same incident's, no event.
    expect(events[0]!.fields.exception).toBe('TimeoutError');
    expect(events[0]!.fields.message).toBeUndefined();
    expect(events[0]!.line.split('\n').at(-1)).toBe(`${p}TimeoutError`);
    expect(events[0]!.incident!.fields).toMatchObject({
      exception: 'TimeoutError',
      message: 'RPC call to execute_model timed out.',
    });
    expect(events[0]!.incident!.rootCause).toMatchObject({ exception: 'TimeoutError', message: '' });
  });

  it('vLLM worker CUDA error: one critical whose fields name the CUDA error, the engine core and monitor absorbed', () => {
    const w = '(Worker_TP0 pid=948496) ERROR 08-10 11:21:05 [multiproc_executor.py:699] ';
    const e = '(EngineCore_DP0 pid=948401) ERROR 08-10 11:21:05 [core.py:710] ';
    const text = [
      ...[
        'WorkerProc hit an exception.',
        'Traceback (most recent call last):',
        '  File "/vllm/v1/executor/multiproc_executor.py", line 694, in worker_busy_loop',
        CUDA_IMA,
      ].map((l) => w + l),
      ...[
        'EngineCore encountered a fatal error.',
        'Traceback (most recent call last):',
        '  File "/vllm/v1/engine/core.py", line 701, in run_engine_core',
        "RuntimeError: Worker failed with error 'CUDA error: an illegal memory access was encountered'",
      ].map((l) => e + l),
      '(EngineCore_DP0 pid=948401) ERROR 08-10 11:21:06 [multiproc_executor.py:283] Worker proc VllmWorker-0 died unexpectedly, shutting down executor.',
    ].join('\n');
    const { events } = scan(`${text}\n`);
    const crit = critical(events);
    expect(names(crit)).toEqual(['vllm_worker_failed']);
    expect(crit[0]!.fields).toMatchObject({
      exception: 'torch.AcceleratorError',
      message: 'CUDA error: an illegal memory access was encountered',
    });
    expect(crit[0]!.incident!.members.map((m) => m.rule)).toEqual([
      'vllm_worker_failed',
      'vllm_engine_core_fatal',
      'vllm_worker_died',
    ]);
  });
});

describe('incidents are grouped by time, never by line count', () => {
  const healthy = (n: number, t: string) =>
    Array.from(
      { length: n },
      (_, i) =>
        `[2026-08-10 ${t} DP0 TP0 EP0] Decode batch, #running-req: ${i % 7}, #token: 100, gen throughput (token/s): 5.0, #queue-req: 0,`,
    );

  it('two deaths an hour apart with few lines between are two events', () => {
    const text = [
      schedulerDeath('14:00:01', [CUDA_IMA]),
      ...healthy(3, '14:30:00'),
      schedulerDeath('15:00:01', [CUDA_IMA]),
    ];
    expect(names(critical(scan(`${text.join('\n')}\n`).events))).toEqual([
      'sglang_scheduler_exception',
      'sglang_scheduler_exception',
    ]);
  });

  it('lines of one death 3 s apart with 250 lines between are one event', () => {
    const text = [
      '[2026-08-10 14:00:01] Subprocess scheduler_0 (pid=1) crashed with exit code -3. Triggering SIGQUIT for cleanup...',
      ...healthy(250, '14:00:02'),
      '[2026-08-10 14:00:04] SIGQUIT received. signum=None, frame=None. It usually means one child failed.',
    ];
    const { events } = scan(`${text.join('\n')}\n`);
    expect(names(critical(events))).toEqual(['sglang_subprocess_crashed']);
    expect(events[0]!.incident!.absorbed).toBe(1);
  });

  it('a start-up line ends the incident: a death right after a restart is a new event', () => {
    const text = [
      '[2026-08-10 14:00:01] Subprocess scheduler_0 (pid=1) crashed with exit code -3. Triggering SIGQUIT for cleanup...',
      '[2026-08-10 14:00:05] The server is fired up and ready to roll!',
      '[2026-08-10 14:00:09] Subprocess scheduler_0 (pid=2) crashed with exit code -3. Triggering SIGQUIT for cleanup...',
    ];
    expect(names(critical(scan(`${text.join('\n')}\n`).events))).toEqual([
      'sglang_subprocess_crashed',
      'sglang_subprocess_crashed',
    ]);
  });
});

describe("one request's line in time", () => {
  const line = (s: number, tp = 0) =>
    `[2026-08-10 14:00:0${s} DP${tp} TP${tp} EP${tp}] Decode transfer failed for request rank=${tp} decode_req.req.rid='r1' decode_req.req.bootstrap_room=1 with exception KVTransferError(bootstrap_room=1): Aborted by AbortReq.`;

  it('per-rank copies within seconds are one event', () => {
    const { events, members } = scan(`${[0, 1, 2, 3, 4, 5, 6, 7].map((tp) => line(1, tp)).join('\n')}\n`);
    expect(events).toHaveLength(1);
    expect(events[0]!.loop).toBeUndefined();
    expect(members).toHaveLength(7);
  });

  it('50 repeats in 5 s are a loop event; the same request again after the window is a new event', () => {
    const repeats = Array.from({ length: 50 }, (_, i) => line(Math.floor(i / 10)));
    const later = line(0).replace('14:00:00', '14:01:00');
    const { events } = scan(`${[...repeats, later].join('\n')}\n`);
    expect(events.map((e) => (e.loop ? 'loop' : 'event'))).toEqual(['event', 'loop', 'event']);
    expect(events[1]!.loop).toEqual({ count: 21, seconds: 10 });
    expect(events[1]!.rule.name).toBe('sglang_decode_transfer_aborted');
  });
});

describe('user text printed unquoted raises nothing; a real death after it still does', () => {
  // Every fixture line, and the same without its logger prefix: the words as on a continuation line.
  const VERBATIM = Object.values(RULE_FIXTURES).flat().join('\n');
  const PREFIX =
    /^(?:[\w.-]+\s+\| )?(?:\([\w.-]+ pid=\d+\) )?(?:(?:DEBUG|INFO|WARNING|ERROR) [\d-]+ [\d:]+ \[[\w.]+:\d+\] )?(?:\[[^\]]*\] )?/;
  const BARE = VERBATIM.split('\n')
    .map((l) => l.replace(PREFIX, ''))
    .join('\n');
  const realDeath = [
    'Exception in thread Thread-3 (bootstrap_thread):',
    'Traceback (most recent call last):',
    '  File "/usr/lib/python3.12/threading.py", line 1073, in _bootstrap_inner',
    "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
  ];

  it('a structured-output pattern (the grammar key string) holding every signature: the death 65 lines on is raised', () => {
    const record = [
      '[2026-08-10 14:00:01 TP0] Grammar compile failed.',
      'Key string: root ::= line+',
      // The grammar runs to the engine's next record (carriers.ts): text shaped like one would end it early.
      BARE,
    ];
    const gap = Array.from(
      { length: 60 },
      () => '[2026-08-10 14:00:02 TP0] Decode batch, #running-req: 1, #queue-req: 0,',
    );
    const { events } = scan(`${[...record, ...gap, ...realDeath].join('\n')}\n`);
    expect(names(critical(events))).toEqual(['nixl_bootstrap_thread_dead']);
  });

  it("a tool parser's multi-line model output holding every signature: the engine death 27 lines on is raised", () => {
    const p = '(APIServer pid=7) DEBUG 08-10 14:00:01 [hermes_tool_parser.py:120] ';
    const output = `${p}model_output: <tool_call>\n${[...VERBATIM.split('\n'), ...BARE.split('\n')].map((l) => p + l).join('\n')}`;
    const gap = Array.from(
      { length: 25 },
      () =>
        '(APIServer pid=7) INFO 08-10 14:00:02 [loggers.py:120] Engine 000: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 1.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.0%',
    );
    const death = [
      '(EngineCore_DP0 pid=9) ERROR 08-10 14:00:03 [core.py:710] EngineCore encountered a fatal error.',
      '(EngineCore_DP0 pid=9) ERROR 08-10 14:00:03 [core.py:710] RuntimeError: CUDA error: an illegal memory access',
    ];
    const { events } = scan(`${[output, ...gap, ...death].join('\n')}\n`);
    expect(names(critical(events))).toEqual(['vllm_engine_core_fatal']);
    expect(events.at(-1)!.incident!.rootCause?.message).toBe('CUDA error: an illegal memory access');
  });

  it('continuation lines of any logger record cannot raise a logger-printed rule', () => {
    // The phrases of rules an engine prints through its logger, each on an unprefixed line of one record.
    const logged = LOG_PACKS.flatMap((p) => PACKS[p].rules)
      .filter((r) => r.logger !== undefined)
      .flatMap((r) => RULE_FIXTURES[r.name] ?? [])
      .map((t) => t.split('\n')[0]!.replace(PREFIX, ''));
    expect(logged.length).toBeGreaterThan(5);
    const text = ['[2026-08-10 14:00:01 TP0] Received a structured request with pattern:', ...logged].join(
      '\n',
    );
    expect(names(scan(`${text}\n`).events)).toEqual([]);
    // The same phrases with the logger's prefix are the engine's own lines: they fire.
    const own = logged.map((l) => `[2026-08-10 14:00:01 TP0] ${l}`).join('\n');
    expect(scan(`${own}\n`).events.length).toBeGreaterThan(0);
  });
});

describe("the incident bundle's log window marks the incident's members", () => {
  it('the event is the trigger; the lines it absorbed are marked members of it', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { LogWindows } = await import('../../src/outputs/incidents/log-window.js');
    const text = `${schedulerDeath('14:00:01', [CUDA_IMA])}\n`;
    const file = join(mkdtempSync(join(tmpdir(), 'ww-members-')), 'prefill.log');
    writeFileSync(file, text);
    const windows = new LogWindows();
    windows.noteRead('prefill', file, 0, 1000);
    const base = { service: 'prefill', file, time: 1000 };
    const { events, members } = scan(text);
    for (const e of events)
      windows.noteMatch({
        kind: 'log',
        target: 't',
        class: 'engine_death',
        fields: e.fields,
        rule: e.rule.name,
        severity: e.severity,
        line: e.line,
        offset: e.offset,
        ...base,
      });
    for (const m of members)
      windows.noteMember({
        ...base,
        offset: m.offset,
        rule: m.rule.name,
        severity: m.severity,
        line: m.line,
        memberOf: m.incident!.members[0]!.rule,
      });
    const [w] = await windows.read(0, 1 << 20);
    expect(w!.marks.map((k) => [k.line, k.rule, k.trigger, k.memberOf ?? null])).toEqual([
      [1, 'sglang_scheduler_exception', true, null],
      [8, 'sglang_subprocess_crashed', false, 'sglang_scheduler_exception'],
      [9, 'sglang_sigquit_running', false, 'sglang_scheduler_exception'],
    ]);
  });
});
