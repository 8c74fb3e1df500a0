// Log events are classified by the class their rule declares (the key the alerts select on), not by rule
// names or by wordings matched in the core. The one data-dependent case, a generic Python thread death whose
// thread is the PD bootstrap thread, is the python pack's decision (`classWhen`), and the event carries it.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyLog } from '../../src/core/log-classes.js';
import { replayFiles } from '../../src/commands/replay-files.js';
import type { LogEventClass, LogEventSignal } from '../../src/core/signals.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-class-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const event = (rule: string, cls: LogEventClass, line: string, severity: LogEventSignal['severity']) =>
  ({
    kind: 'log',
    target: 't',
    service: 'prefill',
    rule,
    class: cls,
    severity,
    line,
    file: '/x.log',
    offset: 0,
    time: 0,
    fields: {},
  }) satisfies LogEventSignal;

describe('the classifier keys on the declared class', () => {
  it('a rule name that mentions the bootstrap thread does not make a kv_bootstrap diagnosis', () => {
    expect(classifyLog(event('my_bootstrap_thread_rule', 'thread_death', 'worker died', 'critical'))).toEqual(
      {
        kind: 'critical',
        diagnosis: 'log:my_bootstrap_thread_rule',
      },
    );
  });

  it('text in the line (a prompt echoed into the log) does not make an abort or a bootstrap death', () => {
    const echoed = "prompt: Aborted by AbortReq. First message should be b'NixlMsgGuard' (bootstrap_thread)";
    expect(classifyLog(event('mine', 'custom', echoed, 'warning'))).toEqual({ kind: 'other' });
    expect(classifyLog(event('mine', 'custom', echoed, 'critical'))).toEqual({
      kind: 'critical',
      diagnosis: 'log:mine',
    });
    expect(classifyLog(event('my_abort_counter', 'custom', 'x', 'warning'))).toEqual({ kind: 'other' });
  });

  it('the declared class decides: kv_bootstrap_dead names its diagnosis, abort counts as an abort', () => {
    expect(classifyLog(event('any', 'kv_bootstrap_dead', 'x', 'critical'))).toEqual({
      kind: 'critical',
      diagnosis: 'kv_bootstrap_thread_dead',
    });
    expect(classifyLog(event('any', 'abort', 'x', 'warning'))).toEqual({ kind: 'abort' });
  });
});

describe('the python pack classes a bootstrap thread death kv_bootstrap_dead', () => {
  it('events and the class label: bootstrap_thread → kv_bootstrap_dead, another thread → thread_death', async () => {
    const file = join(dir, 'prefill.log');
    const death = (thread: string, exc: string) => [
      `Exception in thread Thread-3 (${thread}):`,
      'Traceback (most recent call last):',
      '  File "/usr/lib/python3.11/threading.py", line 1045, in _bootstrap_inner',
      exc,
    ];
    writeFileSync(
      file,
      [
        ...death('bootstrap_thread', 'ConnectionResetError: peer'),
        ...death('forward_thread_func', 'KeyError: 4'),
      ]
        .map((l) => `${l}\n`)
        .join(''),
    );
    const r = replayFiles({ files: [file], packs: ['python'] });
    expect(r.events.map((e) => [e.rule, e.class])).toEqual([
      ['python_thread_exception', 'kv_bootstrap_dead'],
      ['python_thread_exception', 'thread_death'],
    ]);
    const text = await r.registry.metrics();
    expect(text).toMatch(
      /wedgewatch_log_events_total\{[^}]*rule="python_thread_exception",class="kv_bootstrap_dead"[^}]*\} 1/,
    );
    expect(text).toMatch(
      /wedgewatch_log_events_total\{[^}]*rule="python_thread_exception",class="thread_death"[^}]*\} 1/,
    );
  });

  it("a thread death that ends on NIXL's GUARD assertion is the same incident, whatever the thread's name", () => {
    const file = join(dir, 'guard.log');
    const lines = [
      'Exception in thread Thread-9:',
      'Traceback (most recent call last):',
      "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
    ];
    writeFileSync(file, lines.map((l) => `${l}\n`).join(''));
    const r = replayFiles({ files: [file], packs: ['python'] });
    expect(r.events.map((e) => [e.rule, e.class])).toEqual([
      ['python_thread_exception', 'kv_bootstrap_dead'],
    ]);
  });
});
