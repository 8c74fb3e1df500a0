// Acceptance (issue 12, item 3): a user must never raise an event by typing a sentence. A prompt quoting every
// built-in critical (and warning) phrase goes through each request-echo format the engines print: zero events.
import { describe, expect, it } from 'vitest';
import { LOG_PACKS } from '../../src/config/schema.js';
import { PACKS } from '../../src/logs/packs/index.js';
import { compileRuleSet, type RuleMatch } from '../../src/logs/rules.js';
import { ChunkScanner } from '../../src/logs/scanner.js';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';

function scan(text: string): RuleMatch[] {
  const out: RuleMatch[] = [];
  const s = new ChunkScanner(compileRuleSet([...LOG_PACKS], []), 65_536, {
    match: (m) => out.push(m),
    engine: () => {},
    truncated: () => {},
  });
  const buf = Buffer.from(text);
  s.feed(buf, buf.length);
  s.flush();
  return out;
}

/** Python repr() of a str, as `%r` and dataclass reprs print it. */
function pyRepr(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  const body = s
    .replace(/\\/g, '\\\\')
    .replace(/\n/g, '\\n')
    .replace(/\r/g, '\\r')
    .replace(new RegExp(q, 'g'), `\\${q}`);
  return `${q}${body}${q}`;
}

// The message part of each fixture line, without its logger prefix: the words a user would quote.
const PREFIX =
  /^(?:[\w.-]+\s+\| )?(?:\([\w.-]+ pid=\d+\) )?(?:(?:INFO|WARNING|ERROR) [\d-]+ [\d:]+ \[[\w.]+:\d+\] )?(?:\[[^\]]*\] )?/;
const phrases = Object.entries(RULE_FIXTURES).flatMap(([, texts]) =>
  texts.map((t) =>
    t
      .split(/\r?\n/)
      .map((l) => l.replace(PREFIX, ''))
      .join('\n'),
  ),
);
const criticalRules = LOG_PACKS.flatMap((p) => PACKS[p].rules.filter((r) => r.severity === 'critical'));

const ECHO_FORMATS: [string, (prompt: string) => string][] = [
  // SGLang tokenizer_manager.py --log-requests: `Receive: obj=GenerateReqInput(...)`
  [
    'sglang Receive',
    (p) =>
      `[2026-08-10 14:00:01] Receive: obj=GenerateReqInput(rid='5b1c', text=${pyRepr(p)}, sampling_params={'max_new_tokens': 64}, stream=True)`,
  ],
  // SGLang tokenizer_manager.py: `Finish: obj=..., out=...`
  [
    'sglang Finish',
    (p) =>
      `[2026-08-10 14:00:02] Finish: obj=GenerateReqInput(rid='5b1c', text=${pyRepr(p)}), out={'text': ${pyRepr(p)}, 'meta_info': {'id': '5b1c'}}`,
  ],
  // vLLM entrypoints/logger.py: `Received request %s: prompt: %r, params: %s, ...`
  [
    'vllm Received request',
    (p) =>
      `(APIServer pid=7) INFO 08-10 14:00:01 [logger.py:41] Received request chatcmpl-9: prompt: ${pyRepr(p)}, params: SamplingParams(n=1, temperature=0.7), prompt_token_ids: None, lora_request: None.`,
  ],
  // vLLM entrypoints/logger.py: `Generated response %s: output: %r, ...`
  [
    'vllm Generated response',
    (p) =>
      `(APIServer pid=7) INFO 08-10 14:00:03 [logger.py:71] Generated response chatcmpl-9: output: ${pyRepr(p)}, output_token_ids: None, finish_reason: stop`,
  ],
  // No echo marker at all: user text quoted in any other line (JSON access log of a proxy, a debug dump).
  ['quoted in some other line', (p) => `[2026-08-10 14:00:04] request body {"prompt": ${JSON.stringify(p)}}`],
  // Behind a container prefix.
  [
    'compose prefix + vllm echo',
    (p) =>
      `wedge-vllm-1  | (APIServer pid=7) INFO 08-10 14:00:01 [logger.py:41] Received request cmpl-1: prompt: ${pyRepr(p)}, params: None`,
  ],
];

describe('request echoes never raise an event', () => {
  it('the phrases are real: each fires when the engine itself prints it', () => {
    // Guards against a test that passes because the phrases match nothing at all.
    for (const text of Object.values(RULE_FIXTURES).flat())
      expect(scan(`${text}\n`).length, text).toBeGreaterThan(0);
    expect(criticalRules.length).toBeGreaterThan(15);
  });

  for (const [name, echo] of ECHO_FORMATS) {
    it(`${name}: one prompt quoting every built-in phrase → zero events`, () => {
      const prompt = `Please explain these log lines: ${phrases.join(' / ')}`;
      expect(scan(`${echo(prompt)}\n`).map((m) => m.rule.name)).toEqual([]);
    });

    it(`${name}: each phrase as the whole prompt, and multi-line prompts → zero events`, () => {
      const lines = phrases.flatMap((p) => [echo(p), echo(`${p}\n${p}`)]);
      expect(scan(`${lines.join('\n')}\n`).map((m) => `${m.rule.name}: ${m.line}`)).toEqual([]);
    });
  }

  it('a prompt cannot open a multi-line record either: a quoted header followed by a real exception line', () => {
    const text = [
      ECHO_FORMATS[2]![1]('Exception in thread Thread-1 (bootstrap_thread):'),
      "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
    ].join('\n');
    // The real assertion line fires on its own; the echo opened nothing that could claim it.
    expect(scan(`${text}\n`).map((m) => m.rule.name)).toEqual(['nixl_guard_assertion']);
  });
});
