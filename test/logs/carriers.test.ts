// Acceptance (issue 24, finding 1): engines print model output and user grammars unquoted, over many lines. A
// tool call whose argument holds every built-in signature, verbatim, printed by each such call site, raises no
// event; the engine's own traceback after the record still does.
import { describe, expect, it } from 'vitest';
import { LOG_PACKS } from '../../src/config/schema.js';
import { MAX_CARRIER_LINES } from '../../src/sources/logs/carriers.js';
import { compileRuleSet, type RuleMatch } from '../../src/sources/logs/rules.js';
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
    const record =
      `${SGLANG}Failed to parse JSON part: [{"name": "write_file", "arguments": {"path": "log.txt", "content": "` +
      `${VERBATIM}\n${BARE}` +
      `"}}], JSON parse error: Invalid control character at: line 1 column 84 (char 83)`;
    expect(names(scan(`${record}\n`))).toEqual([]);
    // Read a few bytes at a time, the record still opens and ends where it should.
    expect(names(scan(`${record}\n${NIXL_DEATH}\n`, 7))).toEqual(['nixl_bootstrap_thread_dead']);
  });

  it('SGLang llama32: the JSON error printed as its own record ends the part', () => {
    const record = [
      `${SGLANG}Failed to parse JSON part: {"name": "run", "arguments": {"script": "`,
      BARE,
      '"}}',
      `${SGLANG}JSON parse error: Invalid control character at: line 1 column 41 (char 40)`,
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

  it('a record with no end is bounded: past MAX_CARRIER_LINES lines are scanned again', () => {
    const filler = Array.from({ length: MAX_CARRIER_LINES }, () => 'x').join('\n');
    const text = `${SGLANG}Failed to parse JSON part: ["\n${filler}\n${NIXL_DEATH}\n`;
    expect(names(scan(text))).toEqual(['nixl_bootstrap_thread_dead']);
  });
});
