// Acceptance (issue 24): every built-in rule runs in time linear in the line, over adversarial 64 KB lines made
// of the characters its pattern repeats over (its own literals, long runs, its fixture repeated). A quadratic
// pattern costs seconds on such a line; a linear one stays within a generous factor of a plain scan of the same
// line (measured side by side, so a loaded machine slows both).
import { describe, expect, it } from 'vitest';
import { LOG_PACKS } from '../../src/config/schema.js';
import { CARRIERS, OpenCarrier } from '../../src/sources/logs/carriers.js';
import { PACKS } from '../../src/sources/logs/packs/index.js';
import { requiredLiterals } from '../../src/lib/regex.js';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';
import { overBound } from '../helpers/linear-bound.js';

const SIZE = 64 * 1024;
/** A linear pattern may cost this many plain scans of the same line (a quadratic one costs ~10^4 and more). */
const FACTOR = 400;

const fit = (s: string) =>
  s.length >= SIZE ? s.slice(0, SIZE) : s.repeat(Math.ceil(SIZE / Math.max(1, s.length))).slice(0, SIZE);

/** Adversarial lines for a pattern: its literals, then runs; its fixtures repeated, whole and cut short. */
function adversarial(match: string, fixtures: string[]): [string, string][] {
  const lits = requiredLiterals(match) ?? [];
  const head = lits.join(' ');
  const runs = ['a', ' ', '0', 'a.', 'a:', 'a ', "a'", 'a|', '(a', 'aError', 'Error: ', '\t'];
  const out: [string, string][] = [];
  for (const r of runs) out.push([`literals + ${JSON.stringify(r)}…`, fit(`${head} ${r.repeat(SIZE)}`)]);
  for (const r of runs) out.push([`${JSON.stringify(r)}…`, fit(r)]);
  for (const l of lits) out.push([`literal ${JSON.stringify(l)} repeated`, fit(`${l} `)]);
  for (const f of fixtures) {
    for (const line of f.split('\n')) {
      out.push(['fixture repeated', fit(`${line} `)]);
      out.push(['fixture cut, repeated', fit(`${line.slice(0, -2)} `)]);
      out.push(['fixture then run', fit(`${line.slice(0, -2)}${'a'.repeat(SIZE)}`)]);
    }
  }
  return out;
}

const patterns = LOG_PACKS.flatMap((p) =>
  PACKS[p].rules.flatMap((r) => {
    const fx = RULE_FIXTURES[r.name] ?? [];
    const own: [string, string, string[]][] = [[`${r.name}`, r.match, fx]];
    if (r.follows) own.push([`${r.name} follows`, r.follows.match, fx]);
    return own;
  }),
);

describe('built-in rules are linear on adversarial 64 KB lines', () => {
  for (const [name, source, fixtures] of patterns) {
    it(name, () => {
      const re = new RegExp(source);
      const slow: string[] = [];
      for (const [what, line] of adversarial(source, fixtures)) {
        const over = overBound(() => re.exec(line), line, FACTOR);
        if (over !== undefined) slow.push(`${what}: ${over}`);
      }
      expect(slow).toEqual([]);
    });
  }
});

describe('user-text carriers are linear on adversarial 64 KB lines', () => {
  for (const c of CARRIERS) {
    it(c.name, () => {
      const slow: string[] = [];
      const header = `[2026-08-10 14:00:01 TP0] ${c.literal}`;
      const inputs = [
        ...adversarial(c.open.source, [header]),
        ...adversarial(String.raw`: line \d+ column \d+ \(char \d+\)\s*$`, [
          ', JSON parse error: x: line 1 column 2 (char 1)',
          '[2026-08-10 14:00:01 TP0] ',
        ]),
      ];
      for (const [what, line] of inputs) {
        const over = overBound(
          () => {
            const open = OpenCarrier.open(`${header}x`);
            OpenCarrier.open(line);
            open?.takes(line);
          },
          line,
          FACTOR,
        );
        if (over !== undefined) slow.push(`${what}: ${over}`);
      }
      expect(slow).toEqual([]);
    });
  }
});
