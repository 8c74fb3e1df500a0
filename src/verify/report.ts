// The summary printed on stdout: a pass/fail table per step, then each step's detail lines and the baseline
// deltas. --json prints the report object instead.
import { formatDelta } from './baseline.js';
import type { VerifyReport } from './runner.js';

export function formatReport(r: VerifyReport): string {
  const rows: [string, string, string][] = r.steps.map((s) => [s.step, s.ok ? 'PASS' : 'FAIL', s.summary]);
  if (r.baseline) rows.push(['baseline', r.baseline.ok ? 'PASS' : 'FAIL', r.baseline.summary]);
  const w = Math.max(8, ...rows.map((x) => x[0].length));
  const out: string[] = [
    `wedgewatch verify ${r.url} model=${r.model}`,
    '',
    `${'STEP'.padEnd(w)}  RESULT  SUMMARY`,
  ];
  for (const [name, res, sum] of rows) out.push(`${name.padEnd(w)}  ${res.padEnd(6)}  ${sum}`);
  for (const s of r.steps) {
    if (s.details.length === 0) continue;
    out.push('', `${s.step} (${(s.durationMs / 1000).toFixed(1)}s):`);
    for (const d of s.details) out.push(`  ${d}`);
  }
  if (r.baseline) {
    out.push('', `baseline ${r.baseline.path} (threshold ${(r.baseline.threshold * 100).toFixed(0)}%):`);
    for (const d of r.baseline.deltas) out.push(`  ${formatDelta(d)}`);
    if (r.baseline.missing.length) out.push(`  not measured this run: ${r.baseline.missing.join(', ')}`);
  }
  for (const w of r.warnings) out.push('', `warning: ${w}`);
  const failed = rows.filter((x) => x[1] === 'FAIL').length;
  out.push(
    '',
    `${r.ok ? 'PASS' : 'FAIL'}: ${rows.length - failed}/${rows.length} passed in ${(r.durationMs / 1000).toFixed(1)}s`,
  );
  if (r.savedTo) out.push(`results saved to ${r.savedTo}`);
  return out.join('\n') + '\n';
}
