import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ConfigError, parseConfigText } from '../../src/config/load.js';
import { replayCommand } from '../../src/commands/replay.js';
import { requiredLiterals } from '../../src/lib/regex.js';
import { compileRuleSet, RuleError, USER_RULE_MAX_CHARS } from '../../src/sources/logs/rules/compile.js';
import { LineMatcher, type RuleMatch } from '../../src/sources/logs/rules/matcher.js';
import { replayFiles } from '../../src/commands/replay-files.js';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';

const CONFIG = (rules: string) => `
targets:
  - name: t
    endpoints: [{ name: e, url: "http://127.0.0.1:1" }]
rules:
${rules}
`;

describe('literal prefilter extraction', () => {
  it('finds the literal every match must contain, or admits it cannot', () => {
    expect(requiredLiterals(String.raw`Request (?<room>\d+) waiting_timeout`)).toEqual([' waiting_timeout']);
    expect(requiredLiterals(String.raw`assert room in self\.transfer_infos`)).toEqual([
      'assert room in self.transfer_infos',
    ]);
    expect(requiredLiterals('abc|defg')).toEqual(['abc', 'defg']);
    expect(requiredLiterals('colou?r is')).toEqual(['colo']);
    expect(requiredLiterals('(a+)+$')).toBeNull();
    expect(requiredLiterals('x|.*')).toBeNull();
  });
});

describe('user rules', () => {
  it('check rejects patterns that cannot run in linear time, and invalid ones, naming the field', () => {
    const bad = () =>
      parseConfigText(
        CONFIG(`  - { name: a, severity: info, match: "(?=x)(x+x+)+y" }
  - { name: b, severity: info, match: "(unclosed" }
  - { name: c, severity: info, match: "ok", follows: { match: "(a)\\\\1" } }
  - { name: d, severity: info, match: "v=(?<v>\\\\d+)", extract: { w: running } }`),
        'x.yaml',
      );
    expect(bad).toThrow(ConfigError);
    try {
      bad();
    } catch (err) {
      const p = (err as ConfigError).problems.join('\n');
      expect(p).toMatch(/rules\[0\]\.match: this pattern cannot run in linear time/);
      expect(p).toMatch(/rules\[1\]\.match: invalid regular expression/);
      expect(p).toMatch(/rules\[2\]\.follows\.match: this pattern cannot run in linear time/);
      expect(p).toMatch(/rules\[3\]\.extract\.w: the pattern has no named group/);
    }
    expect(() =>
      compileRuleSet([], [{ name: 'a', severity: 'info', class: 'custom', match: '(?<=x)y' }]),
    ).toThrow(RuleError);
  });

  // Issue 24: user rules run on the linear engine and see the first USER_RULE_MAX_CHARS of a line (a longer line
  // is cut there, where `$` would match), so the line stays within that.
  it('a catastrophic-backtracking pattern finishes on a long line (linear engine) instead of hanging', () => {
    const set = compileRuleSet(
      [],
      [{ name: 'evil', severity: 'critical', class: 'custom', match: '(a+)+$' }],
    );
    const m = new LineMatcher(set);
    const out: RuleMatch[] = [];
    const line = `${'a'.repeat(USER_RULE_MAX_CHARS - 1)}!`;
    // Backtracking would need ~2^8000 steps: finishing at all is the property under test.
    m.match(line, 0, (x) => out.push(x));
    m.match('aaaa', 1, (x) => out.push(x));
    expect(out.map((x) => x.offset)).toEqual([1]);
  });

  it('user rules apply only to their services and feed engine gauges through extract', () => {
    const rules = [
      {
        name: 'q',
        severity: 'info' as const,
        class: 'custom' as const,
        match: 'qdepth=(?<d>\\d+)',
        extract: { d: 'queued' as const },
        services: ['decode'],
      },
    ];
    expect(compileRuleSet([], rules, 'prefill').rules).toHaveLength(0);
    const out: RuleMatch[] = [];
    new LineMatcher(compileRuleSet([], rules, 'decode')).match('x qdepth=17', 0, (x) => out.push(x));
    expect(out[0]!.values).toEqual({ queued: 17 });
  });
});

describe('replay', () => {
  it('runs the packs over captured files and merges their timelines by timestamp', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ww-replay-'));
    try {
      const a = join(dir, 'prefill.log');
      const b = join(dir, 'decode.log');
      writeFileSync(
        a,
        `[2026-02-19 16:32:53 TP0] x\n${RULE_FIXTURES.sglang_prefill_bootstrap_aborted![0]}\n${RULE_FIXTURES.nixl_bootstrap_thread_dead![0]}\n`,
      );
      writeFileSync(
        b,
        `${RULE_FIXTURES.sglang_decode_transfer_aborted![0]}\n[t] Decode batch, #running-req: 9, #queue-req: 1, \n`,
      );
      const r = replayFiles({ files: [a, b], packs: ['sglang', 'nixl'] });
      expect(r.events.map((e) => `${e.stamp} ${e.rule}`)).toEqual([
        '2026-02-19 16:32:51 sglang_prefill_bootstrap_aborted',
        // stderr traceback lines carry no time: they inherit the previous event's
        // one incident, one event: the GUARD assertion that ends the traceback is part of the record
        '2026-02-19 16:32:51 nixl_bootstrap_thread_dead',
        '2026-02-19 16:32:52 sglang_decode_transfer_aborted',
      ]);
      expect(r.lines).toBe(2 + 9 + 2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the command prints the timeline and final metric values, with user rules from a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ww-replay-'));
    const out: string[] = [];
    const w = vi.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    const e = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const log = join(dir, 'decode.log');
      writeFileSync(
        log,
        `[2026-01-01 00:00:01 TP0] Decode batch, #running-req: 9, #queue-req: 1, \n[2026-01-01 00:00:02] custom thing 42\n`,
      );
      const rules = join(dir, 'rules.yaml');
      writeFileSync(
        rules,
        'rules:\n  - { name: custom, severity: warning, match: "custom thing (?<n>\\\\d+)" }\n',
      );
      await replayCommand().parseAsync(['node', 'replay', '--pack', 'sglang', '--rules', rules, log]);
    } finally {
      w.mockRestore();
      e.mockRestore();
      rmSync(dir, { recursive: true, force: true });
    }
    const text = out.join('');
    expect(text).toContain('2026-01-01 00:00:02  warning  custom');
    expect(text).toContain('n=42');
    expect(text).toContain(
      'wedgewatch_log_events_total{target="replay",service="decode",rule="custom",class="custom",severity="warning"} 1',
    );
    expect(text).toContain('wedgewatch_engine_running_requests{target="replay",service="decode"} 9');
    expect(text).toContain('wedgewatch_log_lines_total{target="replay",service="decode"} 2');
  });

  it.each([
    ['broken YAML', 'rules: [\n', /YAML: /],
    ['a scalar', 'just text\n', /expected a list of rules/],
    ['a bad rule', 'rules:\n  - { name: r, severity: fatal, match: x }\n', /rules\[0\]\.severity/],
  ])('a --rules file with %s is bad input: exit 2 and a message, no stack trace', async (_what, text, re) => {
    const dir = mkdtempSync(join(tmpdir(), 'ww-replay-'));
    const err: string[] = [];
    const w = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const e = vi.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
    const before = process.exitCode;
    try {
      const log = join(dir, 'decode.log');
      writeFileSync(log, 'x\n');
      const rules = join(dir, 'rules.yaml');
      writeFileSync(rules, text);
      await replayCommand().parseAsync(['node', 'replay', '--rules', rules, log]);
      expect(process.exitCode).toBe(2);
      expect(err.join('')).toMatch(re);
    } finally {
      process.exitCode = before;
      w.mockRestore();
      e.mockRestore();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
