// Acceptance (issue 40): `wedgewatch replay FILE` with no flag on each engine's log — the 23 critical
// incidents and 13 warnings, built from upstream format strings and public reports, with healthy traffic around
// them — raises each fatal path as one critical event naming its root cause, each warning family as a warning,
// nothing on the healthy lines, and nothing on the lines that print user text (the engines' own fatal strings in
// them included). Replay here is what the command runs: planFiles (the engine told from the file's lines, its
// default packs) and replayFiles with the command's default format.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planFiles } from '../../src/commands/replay.js';
import { replayFiles } from '../../src/commands/replay-files.js';
import { rootCauseText } from '../../src/core/signals.js';
import { writeCorpus } from '../fixtures/logs/issue40-files.js';

const dir = mkdtempSync(join(tmpdir(), 'ww-issue40-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const files = writeCorpus(dir);

function replay(file: string) {
  const [plan] = planFiles([file], {});
  return {
    plan: plan!,
    r: replayFiles({ files: [file], packs: plan!.packs, format: 'auto', timeline: false }),
  };
}

describe('issue 40 corpus: replay FILE with no flag', () => {
  for (const f of files.filter((x) => x.entry !== undefined)) {
    const e = f.entry!;
    it(`${e.expect}: ${e.id}`, () => {
      const { plan, r } = replay(f.file);
      expect(plan.guess?.engine, 'the engine told from the lines').toBe(e.engine);
      const shown = r.events.map((x) => `${x.rule}/${x.severity}@${x.lineNo}`);
      // Nothing outside the entry's lines: the healthy traffic raises nothing.
      expect(
        r.events.filter((x) => x.lineNo < f.from || x.lineNo > f.to).map((x) => x.rule),
        shown.join(' '),
      ).toEqual([]);
      const critical = r.events.filter((x) => x.severity === 'critical');
      if (e.expect === 'critical') {
        expect(critical.length, shown.join(' ')).toBe(1);
        if (e.rootCause !== undefined)
          expect(rootCauseText(critical[0]!.incident) ?? '').toContain(e.rootCause);
      } else {
        expect(critical, shown.join(' ')).toEqual([]);
        expect(r.events.filter((x) => x.severity === 'warning').length, shown.join(' ')).toBeGreaterThan(0);
      }
    });
  }

  for (const f of files.filter((x) => x.trap !== undefined)) {
    it(`user text raises nothing: ${f.trap}`, () => {
      expect(replay(f.file).r.events.map((x) => x.rule)).toEqual([]);
    });
  }
});
