// Acceptance (issue 27, item 3): structured logs. The pack fixtures rewritten as JSON and as logfmt records give the
// same events as the plain ones; a traceback escaped in one field is unfolded; user text inside a JSON record
// raises nothing; a line not in the declared format is matched as plain text and counted.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatMetrics, replayFiles } from '../../src/commands/replay-files.js';
import { LOG_PACKS } from '../../src/config/schema.js';
import { decodeJson, decodeLogfmt, logfmtPairs } from '../../src/sources/logs/formats/structured.js';
import { compileRuleSet } from '../../src/sources/logs/rules/compile.js';
import type { RuleMatch } from '../../src/sources/logs/rules/matcher.js';
import { ChunkScanner, type StructuredOptions } from '../../src/sources/logs/scanner.js';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';

function scan(text: string, structured?: StructuredOptions): { events: RuleMatch[]; decodeErrors: number } {
  const events: RuleMatch[] = [];
  let decodeErrors = 0;
  const s = new ChunkScanner(
    compileRuleSet([...LOG_PACKS], []),
    65_536,
    {
      match: (m) => events.push(m),
      engine: () => {},
      truncated: () => {},
      decodeError: () => decodeErrors++,
    },
    0,
    false,
    {},
    structured,
  );
  const buf = Buffer.from(text);
  s.feed(buf, buf.length);
  s.flush();
  return { events, decodeErrors };
}
const shown = (ms: RuleMatch[]) => ms.map((m) => `${m.rule.name} ${JSON.stringify(m.fields)}`);

// A logger's own prefix (SGLang `[time …] `, vLLM `(Proc pid=N) LEVEL MM-DD HH:MM:SS [file:N] `): what a JSON
// formatter puts in fields of its own instead. Stderr lines (threading, torch) keep theirs: they are the message.
const LOGGER_PREFIX =
  /^(?:\([\w.-]+ pid=\d+\) )?(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d \[[\w./-]+:\d+\] |\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d[^\]]*\] )/;
const message = (line: string) => line.replace(LOGGER_PREFIX, '');
const TIME = '2026-08-10T14:00:01.250+00:00';
const json = (msg: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ time: TIME, levelname: 'ERROR', message: msg, ...extra });
const logfmtValue = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
const logfmt = (msg: string) => `time=${TIME} level=error msg=${logfmtValue(msg)} logger=engine`;

describe('structured records give the events plain lines give', () => {
  for (const [rule, texts] of Object.entries(RULE_FIXTURES)) {
    it(`${rule}: as JSON and logfmt records, one per line and (multi-line) one with the lines in its message`, () => {
      for (const text of texts) {
        const lines = text.split('\n');
        const plain = shown(scan(`${text}\n`).events);
        const perLine = (f: (m: string) => string) => `${lines.map((l) => f(message(l))).join('\n')}\n`;
        expect(shown(scan(perLine(json), { format: 'json' }).events), text).toEqual(plain);
        expect(shown(scan(perLine(logfmt), { format: 'logfmt' }).events), text).toEqual(plain);
        expect(shown(scan(perLine(json), { format: 'auto' }).events), text).toEqual(plain);
        if (lines.length > 1) {
          // The record's message is the whole record, escaped in one field (a traceback in one field).
          const whole = lines.map(message).join('\n');
          expect(shown(scan(`${json(whole)}\n`, { format: 'json' }).events), text).toEqual(plain);
          expect(shown(scan(`${logfmt(whole)}\n`, { format: 'logfmt' }).events), text).toEqual(plain);
        }
      }
    });
  }

  it('a JSON record escaped inside a JSON message, and the traceback in its own field, are unfolded', () => {
    const inner = json('EngineCore encountered a fatal error.', {
      exc_info:
        'Traceback (most recent call last):\n  File "core.py", line 1, in run\nRuntimeError: CUDA error: boom',
    });
    const { events } = scan(`${JSON.stringify({ msg: inner, stream: 'stderr' })}\n`, { format: 'json' });
    expect(events.map((e) => e.rule.name)).toEqual(['vllm_engine_core_fatal']);
    expect(events[0]!.fields).toMatchObject({ exception: 'RuntimeError', message: 'CUDA error: boom' });
    expect(events[0]!.time).toBe(Date.parse(TIME));
  });
});

describe('user text inside a JSON record raises nothing', () => {
  const phrases = Object.values(RULE_FIXTURES)
    .flat()
    .flatMap((t) => t.split('\n').map(message));

  it('the phrases are live: each as a record of its own raises an event', () => {
    const { events } = scan(`${phrases.map((p) => json(p)).join('\n')}\n`, { format: 'json' });
    expect(events.length).toBeGreaterThan(20);
  });

  it('in a request echo message, and in fields other than the message, every phrase raises nothing', () => {
    const lines = [
      // vLLM entrypoints/logger.py RequestLogger.log_inputs through a JSON formatter.
      ...phrases.map((p) => json(`Received request chatcmpl-1: prompt: ${JSON.stringify(p)}, params: None`)),
      json('Received request chatcmpl-2: prompt: ' + phrases.join('\n')),
      ...phrases.map((p) => json('request finished', { prompt: p, output: p, fields: { text: p } })),
      ...phrases.map((p) => logfmt(`Finish: obj=GenerateReqInput(text='${p}')`)),
    ];
    expect(shown(scan(`${lines.join('\n')}\n`, { format: 'auto' }).events)).toEqual([]);
  });
});

describe('lines not in the declared format', () => {
  it('are matched as plain text and counted, never dropped', () => {
    const text = [
      json('all fine'),
      '{"truncated": ',
      '[2026-08-10 14:00:01] Subprocess scheduler_0 (pid=7) crashed with exit code -3. Triggering SIGQUIT for cleanup...',
    ].join('\n');
    const { events, decodeErrors } = scan(`${text}\n`, { format: 'json' });
    expect(events.map((e) => e.rule.name)).toEqual(['sglang_subprocess_crashed']);
    // Lines no rule could match are never decoded (the prefilter passes them by): the broken one is not counted.
    // (It comes first: after the chain head, which waits for a traceback, every line is looked at.)
    expect(decodeErrors).toBe(1);
  });

  it('replay counts them per source in wedgewatch_log_decode_errors_total', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ww-structured-'));
    const file = join(dir, 'engine.log');
    writeFileSync(file, `${json('EngineCore encountered a fatal error.')}\nnot json at all\n`);
    const r = replayFiles({ files: [file], packs: ['vllm'], format: 'json', timeline: false });
    expect(r.events.map((e) => e.rule)).toEqual(['vllm_engine_core_fatal']);
    expect(r.events[0]!.time).toBe(Date.parse(TIME));
    expect(await formatMetrics(r.registry)).toContain(
      'wedgewatch_log_decode_errors_total{target="replay",service="engine",format="json"} 1',
    );
  });
});

describe('decoders', () => {
  it('read the configured keys, nested tracing fields and epoch times', () => {
    expect(decodeJson('{"fields":{"message":"boom"},"level":"ERROR","timestamp":1723298401.5}')).toEqual({
      lines: ['boom'],
      level: 'ERROR',
      time: '2024-08-10T14:00:01.500Z',
    });
    const keys = { message: ['body'], level: ['sev'], time: ['at'] };
    expect(decodeJson('{"body":"x","sev":"warn","at":"2026-08-10T14:00:01Z"}', keys)).toEqual({
      lines: ['x'],
      level: 'warn',
      time: '2026-08-10T14:00:01Z',
    });
    expect(decodeLogfmt('at=2026-08-10T14:00:01Z sev=warn body="a \\"b\\"\\nc"', keys)).toEqual({
      lines: ['a "b"', 'c'],
      level: 'warn',
      time: '2026-08-10T14:00:01Z',
    });
    expect(decodeJson('[1,2]')).toBeNull();
    expect(decodeLogfmt('no pairs here at all')).toBeNull();
    expect(logfmtPairs('a="unterminated')).toBeNull();
  });
});
