// What is wrong with a user rule, before it is compiled: its patterns must be valid and linear-time (V8's automaton
// engine, src/lib/regex.ts), and every `extract` key must name a group of the pattern. `check` and the loader report
// these with the rule's path; the log engine refuses to compile a rule that has any.
import { validateUserPattern } from '../lib/regex.js';
import type { RuleConfig } from './schema.js';

/** Problems with one user rule (patterns, extract groups), each prefixed with the field it concerns. */
export function ruleProblems(rule: RuleConfig): string[] {
  const problems: string[] = [];
  const check = (key: string, src: string | undefined) => {
    if (src === undefined) return;
    const why = validateUserPattern(src);
    if (why !== undefined) problems.push(`${key}: ${why}`);
  };
  check('match', rule.match);
  check('follows.match', rule.follows?.match);
  if (problems.length === 0 && rule.extract) {
    const groups = new Set(
      [...`${rule.match}\n${rule.follows?.match ?? ''}`.matchAll(/\(\?<([A-Za-z_]\w*)>/g)].map((m) => m[1]),
    );
    for (const g of Object.keys(rule.extract)) {
      if (!groups.has(g)) problems.push(`extract.${g}: the pattern has no named group (?<${g}>…)`);
    }
  }
  return problems;
}
