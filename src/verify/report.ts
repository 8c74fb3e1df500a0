// The summary printed on stdout: a pass/fail table per step, then each step's detail lines and the baseline
// deltas. --json prints the report object instead.
import { formatComparison } from './compare.js';
import type { VerifyReport } from './runner.js';

export function formatReport(r: VerifyReport): string {
  const rows: [string, string, string, string][] = r.steps.map((s) => [
    s.step,
    s.ok ? 'PASS' : 'FAIL',
    `${(s.durationMs / 1000).toFixed(1)}s`,
    s.summary,
  ]);
  if (r.baseline)
    rows.push([
      'baseline',
      r.baseline.verdict === 'REGRESSION' ? 'FAIL' : r.baseline.verdict,
      '',
      r.baseline.summary,
    ]);
  const w = Math.max(8, ...rows.map((x) => x[0].length));
  const out: string[] = [
    `wedgewatch verify ${r.url} model=${r.model}`,
    '',
    `${'STEP'.padEnd(w)}  RESULT        TIME     SUMMARY`,
  ];
  for (const [name, res, time, sum] of rows)
    out.push(`${name.padEnd(w)}  ${res.padEnd(12)}  ${time.padStart(7)}  ${sum}`);
  for (const s of r.steps) {
    if (s.details.length === 0) continue;
    out.push('', `${s.step} (${(s.durationMs / 1000).toFixed(1)}s):`);
    for (const d of s.details) out.push(`  ${d}`);
  }
  if (r.baseline) {
    out.push(
      '',
      `baseline ${r.baseline.path} (threshold ${(r.baseline.threshold * 100).toFixed(0)}%; after/before with its 95% interval over the trials, Hodges–Lehmann; "detects" = the smallest regression this run's noise would have caught):`,
    );
    for (const d of r.baseline.figures) out.push(`  ${formatComparison(d)}`);
    if (r.baseline.missing.length) out.push(`  not measured this run: ${r.baseline.missing.join(', ')}`);
  }
  for (const w of r.warnings) out.push('', `warning: ${w}`);
  const passed = rows.filter((x) => x[1] === 'PASS').length;
  out.push(
    '',
    `${r.verdict}: ${passed}/${rows.length} passed in ${(r.durationMs / 1000).toFixed(1)}s (${r.repeat} trials per load level after a warm-up)`,
  );
  if (r.savedTo) out.push(`results saved to ${r.savedTo}`);
  return out.join('\n') + '\n';
}
