// Acceptance (issue 12, item 3): a user must never raise an event by typing a sentence. A prompt quoting every
// built-in critical (and warning) phrase goes through each request-echo format the engines print: zero events.
import { describe, expect, it } from 'vitest';
import { LOG_PACKS } from '../../src/config/schema.js';
import { PACKS } from '../../src/sources/logs/packs/index.js';
import { echoAfterPrefix, isRequestEcho } from '../../src/sources/logs/request-echo.js';
import { compileRuleSet } from '../../src/sources/logs/rules/compile.js';
import type { RuleMatch } from '../../src/sources/logs/rules/matcher.js';
import { ChunkScanner } from '../../src/sources/logs/scanner.js';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';

function scan(text: string): RuleMatch[] {
  const out: RuleMatch[] = [];
  const s = new ChunkScanner(compileRuleSet([...LOG_PACKS], []), 65_536, {
    match: (m) => out.push(m),
    // Start-up markers raise no event; they count as matches (a prompt quoting one ends no incident either).
    member: (m) => {
      if (m.rule.startup) out.push(m);
    },
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

describe('the scanner passes request echoes by (built-in rules only)', () => {
  const echoes = ECHO_FORMATS.filter(([name]) => name !== 'quoted in some other line').map(([, f]) =>
    f('Exception in thread Thread-1 (bootstrap_thread):'),
  );

  it('recognises each engine echo by its prefix, and only lines isRequestEcho calls echoes', () => {
    for (const line of echoes) expect(echoAfterPrefix(line, 0, line.length), line).toBe(true);
    const others = [
      "[2026-08-10 14:00:01 TP0] Prefill bootstrap failed for request rank=0 req.rid='a'",
      '[2026-08-10 14:00:01] INFO:     127.0.0.1:5000 - "GET /health HTTP/1.1" 200 OK',
      '[2026-08-10 14:00:01] request body {"prompt": "Receive: obj="}',
      '    raise exc',
      ']',
      '',
    ];
    for (const line of [...echoes, ...others]) {
      if (echoAfterPrefix(line, 0, line.length)) expect(isRequestEcho(line), line).toBe(true);
    }
    for (const line of others) expect(echoAfterPrefix(line, 0, line.length), line).toBe(false);
  });

  it('an echo inside an open record still counts against its `within` and can close nothing', () => {
    // nixl_bootstrap_thread_dead: the header, then the assertion within a few lines. An echo between them is a
    // line of the record (counted), and an echo quoting the closing line does not close it.
    const header = 'Exception in thread Thread-1 (bootstrap_thread):';
    const close = "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?";
    const echo = ECHO_FORMATS[0]![1](close);
    const withEcho = scan([header, echo, close, ''].join('\n')).map((m) => [m.rule.name, m.line]);
    expect(withEcho.map(([name]) => name)).toEqual(['nixl_bootstrap_thread_dead']);
    expect(withEcho).toEqual(scan([header, '    x', close, ''].join('\n')).map((m) => [m.rule.name, m.line]));
    expect(scan([header, echo, ''].join('\n')).map((m) => m.line)).not.toContain(`${header}\n${echo}`);
  });

  it('is off as soon as a user rule runs: a user rule may be meant for echo lines', () => {
    expect(compileRuleSet([...LOG_PACKS], []).skipRequestEchoes).toBe(true);
    const set = compileRuleSet(
      [...LOG_PACKS],
      [{ name: 'asked', severity: 'warning', class: 'custom', match: 'Receive: obj=GenerateReqInput' }],
    );
    expect(set.skipRequestEchoes).toBe(false);
    const out: string[] = [];
    const s = new ChunkScanner(set, 65_536, {
      match: (m) => out.push(m.rule.name),
      engine: () => {},
      truncated: () => {},
    });
    const buf = Buffer.from(`${echoes[0]}\n`);
    s.feed(buf, buf.length);
    expect(out).toEqual(['asked']);
  });
});
