// Acceptance (issue 27): the log-rules page's packs table lists every rule family with its upstream source and the
// versions it applies to. Each pack has a row, and every upstream file a rule names (its `upstream` field) is
// cited in the table, so a rule read from a file the table does not name fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LOG_PACKS } from '../../src/config/schema.js';
import { PACKS } from '../../src/sources/logs/packs/index.js';

const readme = readFileSync(new URL('../../docs/log-rules.md', import.meta.url), 'utf8');
const section = readme.slice(
  readme.indexOf('# Built-in log rules'),
  readme.indexOf('`wedgewatch replay` runs the same packs'),
);
const rows = section.split('\n').filter((l) => /^\| `[a-z_]+` \|/.test(l));

describe('docs/log-rules.md packs table', () => {
  it('has four columns per row and a row for every pack, with its versions', () => {
    expect(rows.length).toBeGreaterThan(LOG_PACKS.length);
    for (const r of rows) expect(r.split(' | ').length, r).toBe(4);
    for (const p of LOG_PACKS) {
      const mine = rows.filter((r) => r.startsWith(`| \`${p}\` |`));
      expect(mine.length, p).toBeGreaterThan(0);
      for (const r of mine) expect(r.split(' | ')[3], r).toMatch(/\d/);
    }
  });

  it("cites every upstream file a rule was read from, in that rule's pack's rows", () => {
    const missing: string[] = [];
    for (const p of LOG_PACKS) {
      const text = rows.filter((r) => r.startsWith(`| \`${p}\` |`)).join('\n');
      for (const r of PACKS[p].rules)
        for (const file of r.upstream.match(/[\w./{},-]+\.(?:py|cpp|rs)\b/g) ?? [])
          if (!text.includes(file)) missing.push(`${p}/${r.name}: ${file}`);
    }
    expect(missing).toEqual([]);
  });
});
