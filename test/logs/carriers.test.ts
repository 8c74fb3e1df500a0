// Acceptance (issue 24, finding 1): engines print model output and user grammars unquoted, over many lines. A
// tool call whose argument holds every built-in signature, verbatim, printed by each such call site, raises no
// event; the engine's own traceback after the record still does.
import { describe, expect, it } from 'vitest';
import { LOG_PACKS } from '../../src/config/schema.js';
import { CARRIERS, MAX_CARRIER_LINES } from '../../src/sources/logs/carriers.js';
import { PACKS } from '../../src/sources/logs/packs/index.js';
import { errorTexts } from '../../src/sources/logs/json-error-tail.js';
import { namesIncidents } from '../../src/core/reduce/warnings.js';
import { compileRuleSet } from '../../src/sources/logs/rules/compile.js';
import type { RuleMatch } from '../../src/sources/logs/rules/matcher.js';
import { ChunkScanner } from '../../src/sources/logs/scanner.js';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';

function scan(text: string, chunk = 1 << 20): RuleMatch[] {
  const out: RuleMatch[] = [];
  const s = new ChunkScanner(compileRuleSet([...LOG_PACKS], []), 65_536, {
    match: (m) => out.push(m),
    engine: () => {},
    truncated: () => {},
  });
  const buf = Buffer.from(text);
  for (let i = 0; i < buf.length; i += chunk) {
    const part = buf.subarray(i, Math.min(buf.length, i + chunk));
    s.feed(part, part.length);
  }
  s.flush();
  return out;
}
const names = (ms: RuleMatch[]) => ms.map((m) => m.rule.name);

// Every fixture line of every built-in rule, as the engine prints it (prefix and all)…
const VERBATIM = Object.values(RULE_FIXTURES).flat().join('\n');
// …and without its logger prefix: the words as they sit on an unprefixed continuation line.
const PREFIX =
  /^(?:[\w.-]+\s+\| )?(?:\([\w.-]+ pid=\d+\) )?(?:(?:DEBUG|INFO|WARNING|ERROR) [\d-]+ [\d:]+ \[[\w.]+:\d+\] )?(?:\[[^\]]*\] )?/;
const BARE = VERBATIM.split('\n')
  .map((l) => l.replace(PREFIX, ''))
  .join('\n');

// The engine's own records, after the user's: each must still raise its event.
const NIXL_DEATH = [
  'Exception in thread Thread-3 (bootstrap_thread):',
  'Traceback (most recent call last):',
  '  File "/usr/lib/python3.12/threading.py", line 1073, in _bootstrap_inner',
  '    self.run()',
  "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
].join('\n');
const SGLANG = '[2026-08-10 14:00:03 TP0] ';

describe('records that carry user text raise nothing, whatever lines they hold (issue 24)', () => {
  it('every fixture line verbatim holds a real event on its own (the attack is live without the guard)', () => {
    const direct = names(scan(`${VERBATIM}\n`)).filter((n) => n.startsWith('nixl_bootstrap'));
    expect(direct).toContain('nixl_bootstrap_thread_dead');
  });

  it('SGLang `Failed to parse JSON part: {json}, JSON parse error: {e}` (mistral/base detectors)', () => {
    const text = `[{"name": "write_file", "arguments": {"path": "log.txt", "content": "${VERBATIM}\n${BARE}"}}]`;
    // What CPython's json.loads raises on the text (json-error-tail.test.ts holds errorTexts to CPython's own).
    const record = `${SGLANG}Failed to parse JSON part: ${text}, JSON parse error: ${errorTexts(text, 'loads')[0]}`;
    expect(names(scan(`${record}\n`))).toEqual([]);
    // Read a few bytes at a time, the record still opens and ends where it should.
    expect(names(scan(`${record}\n${NIXL_DEATH}\n`, 7))).toEqual(['nixl_bootstrap_thread_dead']);
  });

  it('SGLang llama32: the JSON error printed as its own record ends the part', () => {
    const record = [
      `${SGLANG}Failed to parse JSON part: {"name": "run", "arguments": {"script": "`,
      BARE,
      '"}}',
      `${SGLANG}JSON parse error: Invalid control character at: line 1 column 42 (char 41)`,
    ].join('\n');
    expect(names(scan(`${record}\n${NIXL_DEATH}\n`))).toEqual(['nixl_bootstrap_thread_dead']);
  });

  it('SGLang `Model attempted to call undefined function: {name}` runs to the next record', () => {
    const record = `${SGLANG}Model attempted to call undefined function: x\n${BARE}`;
    expect(names(scan(`${record}\n`))).toEqual([]);
    const next = `${SGLANG}Received sigquit from a child process. It usually means the child failed.`;
    expect(names(scan(`${record}\n${next}\n`))).toEqual(['sglang_sigquit_from_child']);
  });

  it("SGLang grammar: the user's pattern after `Key string: ` in the scheduler's traceback", () => {
    const record = [
      `${SGLANG}Scheduler hit an exception: Traceback (most recent call last):`,
      '  File "/sgl/python/sglang/srt/constrained/xgrammar_backend.py", line 77, in accept_token',
      'ValueError: Tokens not accepted: 1234',
      'Accepted tokens: [1, 2, 3]',
      'Key string: root ::= line+',
      BARE,
    ].join('\n');
    // The scheduler's death is real and raised; nothing in the user's grammar is.
    expect(names(scan(`${record}\n`))).toEqual(['sglang_scheduler_exception']);
  });

  it("vLLM tool parsers: NewLineFormatter repeats the prefix on every line of the model's output", () => {
    const p = '(APIServer pid=7) DEBUG 08-10 14:00:01 [step3_tool_parser.py:120] ';
    const record = `${p}model_output: <tool_call>\n${BARE.split('\n')
      .map((l) => p + l)
      .join('\n')}`;
    expect(names(scan(`${record}\n`))).toEqual([]);
    const real =
      '(EngineCore_DP0 pid=9) ERROR 08-10 14:00:02 [core.py:710] EngineCore encountered a fatal error.\n' +
      '(EngineCore_DP0 pid=9) ERROR 08-10 14:00:02 [core.py:710] RuntimeError: CUDA error: an illegal memory access';
    expect(names(scan(`${record}\n${real}\n`))).toEqual(['vllm_engine_core_fatal']);
  });

  it("SGLang grammar compile failures (issue 27): the user's schema or grammar raw after `Skip invalid …` raises only the warning", () => {
    const record = [
      `${SGLANG}Skip invalid ebnf: ebnf=root ::= line+`,
      BARE,
      "line ::= [a-z]+, e=RuntimeError('EBNF parse error at line 3')",
    ].join('\n');
    expect(names(scan(`${record}\n`))).toEqual(['sglang_grammar_invalid']);
    // The newer repr form puts every signature on the header line itself: the grammar rule only.
    const repr = `${SGLANG}Hit invalid json_schema: key_string='${VERBATIM.split('\n').join(' ')}', e=RuntimeError('x')`;
    expect(names(scan(`${repr}\n`))).toEqual(['sglang_grammar_invalid']);
    // The engine's own death after the record is still raised, with its root cause.
    const death = [
      `${SGLANG}Scheduler hit an exception: Traceback (most recent call last):`,
      '  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2890, in run_scheduler_process',
      'torch.AcceleratorError: CUDA error: an illegal memory access was encountered',
    ].join('\n');
    const ms = scan(`${record}\n${death}\n`);
    expect(names(ms)).toEqual(['sglang_grammar_invalid', 'sglang_scheduler_exception']);
    expect(ms[1]!.incident?.rootCause?.exception).toBe('torch.AcceleratorError');
  });

  it("SGLang grammar accept failures (issue 27): the failed request's warning, and nothing of the grammar in its ValueError", () => {
    const record = [
      `${SGLANG}Grammar accept_token failed for req 5f1c with token 1234: Tokens not accepted: 1234`,
      'Accepted tokens: [1, 2, 3]',
      'Key string: root ::= line+',
      BARE,
    ].join('\n');
    expect(names(scan(`${record}\n`))).toEqual(['sglang_grammar_accept_failed']);
    const next = `${SGLANG}Received sigquit from a child process. It usually means the child failed.`;
    expect(names(scan(`${record}\n${next}\n`))).toEqual([
      'sglang_grammar_accept_failed',
      'sglang_sigquit_from_child',
    ]);
  });

  it("vLLM tool-parser errors (issue 27): the warning on the parser's header, nothing from the model output its traceback quotes", () => {
    const p = '(APIServer pid=7) ERROR 08-10 14:00:01 [pythonic_tool_parser.py:104] ';
    const record = [
      'Error in extracting tool call from response.',
      'Traceback (most recent call last):',
      '  File "/vllm/entrypoints/openai/tool_parsers/pythonic_tool_parser.py", line 90, in extract_tool_calls',
      '    module = ast.parse(model_output)',
      ...VERBATIM.split('\n'),
      ...BARE.split('\n'),
      'SyntaxError: invalid syntax',
    ]
      .map((l) => p + l)
      .join('\n');
    expect(names(scan(`${record}\n`))).toEqual(['vllm_tool_parser_error']);
    const real =
      '(EngineCore_DP0 pid=9) ERROR 08-10 14:00:02 [core.py:710] EngineCore encountered a fatal error.\n' +
      '(EngineCore_DP0 pid=9) ERROR 08-10 14:00:02 [core.py:710] RuntimeError: CUDA error: an illegal memory access';
    const ms = scan(`${record}\n${real}\n`);
    expect(names(ms)).toEqual(['vllm_tool_parser_error', 'vllm_engine_core_fatal']);
    expect(ms[1]!.fields).toMatchObject({ exception: 'RuntimeError' });
  });

  it("the model's output cannot raise the tool-parser warning itself: a copy of its header inside a record is the record's", () => {
    const p = '(APIServer pid=7) DEBUG 08-10 14:00:01 [qwen3coder_tool_parser.py:200] ';
    const record = [`${p}model_output: <tool_call>`, `${p}Error in extracting tool call from response.`].join(
      '\n',
    );
    expect(names(scan(`${record}\n`))).toEqual([]);
    // Nor with user text after the parser's words on a header line of its own.
    const e = '(APIServer pid=7) ERROR 08-10 14:00:01 [hermes_tool_parser.py:136] ';
    expect(
      names(scan(`${e}Error in extracting tool call from response. EngineCore encountered a fatal error.\n`)),
    ).toEqual([]);
  });

  it('a rule a carrier lets see its header is a warning whose class names no incident', () => {
    const rules = new Map(Object.values(PACKS).flatMap((p) => p.rules.map((r) => [r.name, r] as const)));
    const raised = CARRIERS.flatMap((c) => c.raises ?? []);
    expect(raised.length).toBeGreaterThan(0);
    for (const name of raised) {
      const r = rules.get(name);
      expect(r, name).toBeDefined();
      expect(r!.severity, name).toBe('warning');
      expect(namesIncidents(r!.class), name).toBe(false);
    }
  });

  it('a record opened before the user text is neither closed nor counted by it', () => {
    // A real thread-death header, then the user's record quoting a closing line, then the real close.
    const text = [
      'Exception in thread Thread-3 (bootstrap_thread):',
      `${SGLANG}Failed to parse JSON part: ["`,
      ...Array.from({ length: 40 }, () => 'ValueError: not the cause'),
      '"], JSON parse error: Invalid control character at: line 1 column 3 (char 2)',
      "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
    ].join('\n');
    const ms = scan(`${text}\n`);
    expect(names(ms)).toEqual(['nixl_bootstrap_thread_dead']);
    expect(ms[0]!.line).not.toContain('not the cause');
  });

  it('a record with no end is bounded: past MAX_CARRIER_LINES lines the next record ends it (issue 37)', () => {
    const filler = Array.from({ length: MAX_CARRIER_LINES }, () => 'x').join('\n');
    const text = `${SGLANG}Failed to parse JSON part: ["\n${filler}\n${SGLANG}next\n${NIXL_DEATH}\n`;
    expect(names(scan(text))).toEqual(['nixl_bootstrap_thread_dead']);
  });
});
