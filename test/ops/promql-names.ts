// Metric names referenced by a PromQL expression, without a full parser: strings, label matchers,
// grouping clauses, ranges and durations are removed first, then what is left that is an identifier
// and not a function call, keyword or number is a metric name.
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'inf',
  'nan',
  'atan2',
]);

export function metricNamesIn(expr: string): Set<string> {
  let s = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^{}]*\}/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\boffset\s+-?[0-9a-z]+/gi, ' ')
    .replace(/@\s*[0-9.]+|@\s*(?:start|end)\(\)/g, ' ');
  // Numbers (1, 0.9, 1e3, 0x1f) first, so their letters are not taken for identifiers.
  s = s.replace(/\b0x[0-9a-f]+\b|(?<![\w:])\d+(?:\.\d+)?(?:e[+-]?\d+)?/gi, ' ');
  const names = new Set<string>();
  for (const m of s.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const after = s.slice(m.index + m[0].length);
    if (/^\s*\(/.test(after)) continue; // function or aggregation
    if (KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return names;
}
