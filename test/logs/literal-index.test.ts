// The matcher's literal index (rules/literal-index.ts LiteralIndex) names exactly the rules one of whose literals occurs in a line,
// as asking each rule would (as a predicate, and as the ascending list the matcher walks): on every pack rule's
// fixture lines, on lines made of many literals (past the hit bound, where it asks each rule) and on seeded random
// mixes of literals, their fragments and non-ASCII text.
import { describe, expect, it } from 'vitest';
import { LOG_PACKS } from '../../src/config/schema.js';
import { compileRuleSet } from '../../src/sources/logs/rules/compile.js';
import {
  LITERAL_TABLES_KEPT,
  LiteralIndex,
  literalTablesKept,
} from '../../src/sources/logs/rules/literal-index.js';
import { mulberry32 } from '../../src/sim/prng.js';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';

const set = compileRuleSet(
  [...LOG_PACKS],
  [
    { name: 'user_rule', match: 'custom (?<n>\\d+) thing', severity: 'warning', class: 'custom' },
    { name: 'user_any', match: '\\d+', severity: 'warning', class: 'custom' },
  ],
);
const index = new LiteralIndex(set.rules);
const literals = [...new Set(set.rules.flatMap((r) => r.literals ?? []))];

function expectExact(line: string): void {
  const got = index.candidates(line);
  const want = set.rules.map((r) => r.literals === null || r.literals.some((l) => line.includes(l)));
  expect(
    set.rules.map((_, i) => got(i)),
    line.slice(0, 200),
  ).toEqual(want);
  // The matcher walks the list: the same rules, ascending (rule order decides which record wins a header).
  expect([...index.list(line)], line.slice(0, 200)).toEqual(want.flatMap((yes, i) => (yes ? [i] : [])));
}

describe('LiteralIndex', () => {
  it('names the rules whose literals a line holds, and every rule without literals', () => {
    expect(literals.length).toBeGreaterThan(50);
    for (const texts of Object.values(RULE_FIXTURES))
      for (const t of texts) for (const l of t.split('\n')) expectExact(l);
    expectExact('');
    expectExact('ab');
    expectExact('custom 12 thing');
  });

  it('stays exact on lines of many literals (past its hit bound)', () => {
    expectExact(literals.join(' '));
    expectExact(literals.map((l) => l.slice(0, 3)).join('') + literals.at(-1)!);
    expectExact(`${'Ses'.repeat(100)} ${literals[0]}`);
  });

  it('agrees with asking each rule on seeded random lines', () => {
    const rnd = mulberry32(2027);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const noise = ['', ' ', 'x', 'caf\u00e9', '\u4e2d\u6587', '[2026-08-10 14:00:01 TP0] ', '"', "'", '\t'];
    for (let n = 0; n < 3000; n++) {
      let line = '';
      const parts = Math.floor(rnd() * 6);
      for (let k = 0; k < parts; k++) {
        const l = pick(literals);
        const cut = rnd() < 0.3 ? l.slice(0, Math.max(1, Math.floor(rnd() * l.length))) : l;
        line += pick(noise) + cut;
      }
      expectExact(line);
    }
  });

  // Every followed file compiles its own rule set: 50 targets' two logs built 100 equal 256 KiB tables (25 MB).
  it('shares one table between indexes over equal literal lists, each marking its own lines', () => {
    const packs = ['sglang', 'nixl', 'python'] as const;
    const a = new LiteralIndex(compileRuleSet([...packs], []).rules);
    const b = new LiteralIndex(compileRuleSet([...packs], []).rules);
    expect(b.table.starts).toBe(a.table.starts);
    expect(b.table.buckets).toBe(a.table.buckets);
    // Another literal list (a user rule added) has its own table.
    const user = compileRuleSet(
      [...packs],
      [{ name: 'u', match: 'zzq custom', severity: 'warning', class: 'custom' }],
    );
    expect(new LiteralIndex(user.rules).table.starts).not.toBe(a.table.starts);
    // What a line marks stays the index's own: b's line does not change a's answer for its line.
    const rules = compileRuleSet([...packs], []).rules;
    const named = (line: string): boolean[] =>
      rules.map((r) => r.literals === null || r.literals.some((l) => line.includes(l)));
    const lineA = RULE_FIXTURES[Object.keys(RULE_FIXTURES)[0]!]![0]!.split('\n')[0]!;
    const fromA = a.candidates(lineA);
    b.candidates('nothing of any rule here');
    expect(rules.map((_, i) => fromA(i))).toEqual(named(lineA));
    expect(named(lineA).some((yes, i) => yes && rules[i]!.literals !== null)).toBe(true);
  });

  it('keeps at most LITERAL_TABLES_KEPT tables however many rule sets it has seen, and stays exact past them', () => {
    for (let n = 0; n < 5 * LITERAL_TABLES_KEPT; n++) {
      const s = compileRuleSet(
        ['sglang'],
        [{ name: `u${n}`, match: `rule number ${n} fired`, severity: 'warning', class: 'custom' }],
      );
      const ix = new LiteralIndex(s.rules);
      expect(literalTablesKept()).toBeLessThanOrEqual(LITERAL_TABLES_KEPT);
      const line = `x rule number ${n} fired`;
      const got = ix.candidates(line);
      expect(s.rules.map((_, i) => got(i))).toEqual(
        s.rules.map((r) => r.literals === null || r.literals.some((l) => line.includes(l))),
      );
    }
    expect(literalTablesKept()).toBe(LITERAL_TABLES_KEPT);
  });
});
