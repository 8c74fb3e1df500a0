// The order vitest starts test files in: the longest first by test/durations.json (`node scripts/test-durations.mjs`
// writes it from a JSON report), then the unlisted ones in vitest's own order (projects one after another).
// Why: the end-to-end files mostly wait on probe cadences, so the lane's time is its slowest files' if they start
// late. On a fresh clone vitest has no results of its own and starts larger files first: the fault matrix (53 s, a
// 30-line file) started 290 s into a 343 s run on a quiet machine (issue 39). A stale or missing figure changes the
// order only, never a result.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const ROOT = new URL('..', import.meta.url).pathname;
const DURATIONS = JSON.parse(readFileSync(new URL('durations.json', import.meta.url), 'utf8')) as Record<
  string,
  number
>;

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const seconds = (f: TestSpecification) => DURATIONS[relative(ROOT, f.moduleId)] ?? 0;
    // A stable sort over every project: the fast lane's long files (CPU on the virtual clock) start among the
    // end-to-end ones (which mostly wait) instead of after them all.
    return base
      .map((f, i) => ({ f, i }))
      .sort((a, b) => seconds(b.f) - seconds(a.f) || a.i - b.i)
      .map((x) => x.f);
  }
}
