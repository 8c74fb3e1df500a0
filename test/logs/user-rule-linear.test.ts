// Acceptance (issue 24, finding 4): a common user rule, `(?<msg>.*) failed after (?<n>\d+) retries`, passed `check`
// and was quadratic on the backtracking engine: five logged 64 KB prompts blocked the event loop 12.3 s. User rules
// now run on V8's linear engine and see at most USER_RULE_MAX_CHARS of a line.
import { describe, expect, it } from 'vitest';
import { ruleSchema } from '../../src/config/schema.js';
import { compileRuleSet, USER_RULE_MAX_CHARS } from '../../src/sources/logs/rules/compile.js';
import type { RuleMatch } from '../../src/sources/logs/rules/matcher.js';
import { ChunkScanner } from '../../src/sources/logs/scanner.js';
import { best, plainScan } from '../helpers/linear-bound.js';

const RULE = ruleSchema.parse({
  name: 'upload_retries',
  severity: 'warning',
  match: String.raw`(?<msg>.*) failed after (?<n>\d+) retries`,
});

function scan(text: string): RuleMatch[] {
  const out: RuleMatch[] = [];
  const s = new ChunkScanner(compileRuleSet(['sglang', 'nixl', 'python'], [RULE]), 65_536, {
    match: (m) => out.push(m),
    engine: () => {},
    truncated: () => {},
  });
  const buf = Buffer.from(text);
  s.feed(buf, buf.length);
  s.flush();
  return out;
}

// Five logged prompts of 64 KB that mention the rule's literal and then never say `retries`.
const PROMPT = `[2026-08-10 14:00:01] Receive: obj=GenerateReqInput(text='x failed after ${'a'.repeat(64 * 1024 - 60)}')`;
const LOG = `${Array.from({ length: 5 }, () => PROMPT).join('\n')}\n`;

describe('user rules run in linear time (issue 24)', () => {
  it('the rule still matches and names its groups', () => {
    const ms = scan('[2026-08-10 14:00:01 TP0] upload of shard 3 failed after 5 retries\n');
    expect(ms.map((m) => [m.rule.name, m.fields.n])).toEqual([['upload_retries', '5']]);
    expect(ms[0]!.fields.msg).toContain('upload of shard 3');
  });

  it('five logged 64 KB prompts cost a bounded number of plain scans of the same bytes', () => {
    expect(scan(LOG)).toEqual([]);
    const plain = Math.max(
      best(() => plainScan(LOG)),
      0.05,
    );
    const t = best(() => scan(LOG), 5);
    // Backtracking: ~12 000 ms, ~10^4 plain scans and more. Linear and capped: a few ms, 50-300 plain scans on a
    // quiet machine and past 400 under load 20 (a preempted best-of-three). The bound sits between the two
    // regimes, 5x under the quadratic one, so load cannot cross it and a backtracking engine still does.
    expect(t).toBeLessThan(2000 * plain);
  });

  it('a user rule sees the first USER_RULE_MAX_CHARS of a line, no more', () => {
    const within = `${'b'.repeat(USER_RULE_MAX_CHARS - 40)} failed after 2 retries\n`;
    const past = `${'b'.repeat(USER_RULE_MAX_CHARS)} failed after 2 retries\n`;
    expect(scan(within).map((m) => m.rule.name)).toEqual(['upload_retries']);
    expect(scan(past)).toEqual([]);
  });
});
