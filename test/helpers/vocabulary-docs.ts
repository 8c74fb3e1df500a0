// The docs checked against the vocabulary (src/core/vocabulary.ts): docs/diagnoses.md's table is rendered from
// DIAGNOSES, every diagnosis has a row in the runbooks' "Act by diagnosis" table, a runbook section that exists
// and an alert that exists, and the docs list nothing the vocabulary lacks. The functions take the vocabulary
// and the texts as arguments, so a test can extend the vocabulary and see what is reported missing.
import {
  documentedDiagnosis,
  documentedDiagnosisNames,
  type DiagnosisEntry,
  EVIDENCE,
  type Vocabulary,
} from '../../src/core/vocabulary.js';

export interface DocTexts {
  /** docs/diagnoses.md */
  diagnoses: string;
  runbooks: string;
  /** alerts/wedgewatch.rules.yml */
  alerts: string;
}

/** One row of a diagnosis in docs/diagnoses.md. */
const row = (name: string, d: DiagnosisEntry) =>
  `| \`${name}\` | ${d.states.join(' / ')} | ${d.evidence} | ${d.meaning} | [runbooks](runbooks.md#${d.runbook}) |`;

const DIAGNOSIS_HEADER = '| diagnosis | state | evidence | from | runbook |';
const EVIDENCE_HEADER = '| rank | evidence | what it is | diagnoses |';

/** docs/diagnoses.md's table, rendered from the vocabulary. */
export function diagnosisTable(v: Vocabulary): string {
  const rows = documentedDiagnosisNames(v).map((n) => row(n, documentedDiagnosis(n, v)!));
  return [DIAGNOSIS_HEADER, '|---|---|---|---|---|', ...rows].join('\n');
}

/** docs/diagnoses.md's evidence ranking, strongest first, with the diagnoses each kind names. */
export function evidenceTable(v: Vocabulary): string {
  const names = documentedDiagnosisNames(v);
  const rows = Object.entries(EVIDENCE).map(([kind, meaning], i) => {
    const of = names.filter((n) => documentedDiagnosis(n, v)!.evidence === kind).map((n) => `\`${n}\``);
    return `| ${i + 1} | ${kind} | ${meaning} | ${of.join(', ') || '—'} |`;
  });
  return [EVIDENCE_HEADER, '|---|---|---|---|', ...rows].join('\n');
}

/** The table that starts with `header` in the section titled `section` (its lines, header first). */
function tableIn(text: string, section: RegExp, header: string): string[] {
  const start = text.search(section);
  if (start < 0) return [];
  const from = text.indexOf(header, start);
  if (from < 0) return [];
  const lines = text.slice(from).split('\n');
  const end = lines.findIndex((l) => !l.startsWith('|'));
  return lines.slice(0, end < 0 ? lines.length : end);
}

/** Backticked names in a table row's first cell. */
const namesIn = (line: string) => [...(line.split('|')[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** Section anchors of a markdown text: GitHub's heading slugs and explicit `<a id>`s. */
export function anchorsOf(md: string): Set<string> {
  const slugs = [...md.matchAll(/^##+ (.+)$/gm)].map((m) =>
    m[1]!
      .trim()
      .toLowerCase()
      .replace(/[^a-z0-9 _-]/g, '')
      .replace(/ /g, '-'),
  );
  const ids = [...md.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!);
  return new Set([...slugs, ...ids]);
}

/** Every way the docs disagree with the vocabulary; empty when they agree. */
export function diagnosisDocProblems(v: Vocabulary, t: DocTexts): string[] {
  const problems: string[] = [];
  const names = documentedDiagnosisNames(v);
  const known = new Set(names);

  const readme = tableIn(t.diagnoses, /^# Diagnoses$/m, DIAGNOSIS_HEADER);
  const readmeNames = new Set(readme.slice(2).flatMap(namesIn));
  for (const n of names)
    if (!readmeNames.has(n)) problems.push(`docs/diagnoses.md: no row for diagnosis ${n}`);
  for (const n of readmeNames)
    if (!known.has(n)) problems.push(`docs/diagnoses.md: a row for ${n}, not a diagnosis`);
  if (readme.join('\n') !== diagnosisTable(v))
    problems.push(
      `docs/diagnoses.md: the diagnosis table differs from the vocabulary's; it should read:\n${diagnosisTable(v)}`,
    );
  const ranking = tableIn(t.diagnoses, /^# Diagnoses$/m, EVIDENCE_HEADER);
  if (ranking.join('\n') !== evidenceTable(v))
    problems.push(
      `docs/diagnoses.md: the evidence ranking differs from the vocabulary's; it should read:\n${evidenceTable(v)}`,
    );

  const runbookRows = tableIn(t.runbooks, /^## At 3 a\.m\./m, '| diagnosis | what it is | action |');
  const runbookNames = new Set(runbookRows.slice(2).flatMap(namesIn));
  for (const n of names) if (!runbookNames.has(n)) problems.push(`runbooks: no row for diagnosis ${n}`);
  for (const n of runbookNames) if (!known.has(n)) problems.push(`runbooks: a row for ${n}, not a diagnosis`);

  const anchors = anchorsOf(t.runbooks);
  const alerts = new Set([...t.alerts.matchAll(/^\s*- alert: (\w+)\s*$/gm)].map((m) => m[1]!));
  for (const n of names) {
    const d = documentedDiagnosis(n, v)!;
    if (!anchors.has(d.runbook)) problems.push(`runbooks: no section #${d.runbook} for diagnosis ${n}`);
    if (!alerts.has(d.alert)) problems.push(`alerts: no alert ${d.alert} for diagnosis ${n}`);
  }
  // Alerts that select on a diagnosis name one that exists.
  for (const m of t.alerts.matchAll(/diagnosis="([^"]+)"/g))
    if (!known.has(m[1]!)) problems.push(`alerts: selects on diagnosis ${m[1]}, not a diagnosis`);
  return problems;
}
