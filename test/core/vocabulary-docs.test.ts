// docs/diagnoses.md's table, the runbooks and the alerts agree with the vocabulary: a diagnosis without a docs row
// row, a runbook row and section, or an alert fails here, and so does a doc entry for a diagnosis that does not
// exist. (structured_output_stalled had no docs row and no runbook.)
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VOCABULARY } from '../../src/core/vocabulary.js';
import { diagnosisDocProblems } from '../helpers/vocabulary-docs.js';

const texts = {
  diagnoses: readFileSync('docs/diagnoses.md', 'utf8'),
  runbooks: readFileSync('docs/runbooks.md', 'utf8'),
  alerts: readFileSync('alerts/wedgewatch.rules.yml', 'utf8'),
};

describe('docs from the vocabulary', () => {
  it('every diagnosis has a docs row, a runbook row and section, and an alert; nothing else is listed', () => {
    expect(diagnosisDocProblems(VOCABULARY, texts)).toEqual([]);
  });

  it('a docs row or runbook row for a diagnosis that does not exist is reported', () => {
    const diagnoses = texts.diagnoses.replace(
      '| diagnosis | state | evidence | from | runbook |\n|---|---|---|---|---|\n',
      '| diagnosis | state | evidence | from | runbook |\n|---|---|---|---|---|\n| `gone_away` | wedged | hung | x | y |\n',
    );
    const runbooks = texts.runbooks.replace(
      '| diagnosis | what it is | action |\n|---|---|---|\n',
      '| diagnosis | what it is | action |\n|---|---|---|\n| `gone_away` | x | y |\n',
    );
    const got = diagnosisDocProblems(VOCABULARY, { ...texts, diagnoses, runbooks });
    expect(got).toContain('docs/diagnoses.md: a row for gone_away, not a diagnosis');
    expect(got).toContain('runbooks: a row for gone_away, not a diagnosis');
  });
});
