// The cost of the next probe kind and diagnosis: one entry in the vocabulary, and the derived artefacts follow.
// A throwaway kind and diagnosis, added to a copy of the vocabulary in test scope, are validated by the config
// schemas, exported as pre-created series, judged by their traits, and reported missing from the docs.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { probeKindSchema, stateOrDiagnosisSchema } from '../../src/config/vocabulary-schema.js';
import {
  completionKinds,
  failThreshold,
  isCompletion,
  PROBE_RESULTS,
  VOCABULARY,
  wedgeCauses,
  type Vocabulary,
} from '../../src/core/vocabulary.js';
import { WEDGE_CAUSES } from '../../src/core/verdict/evaluate.js';
import { probeSeries } from '../../src/outputs/metrics/known-series.js';
import { diagnosisDocProblems } from '../helpers/vocabulary-docs.js';

const extended: Vocabulary = {
  ...VOCABULARY,
  probeKinds: {
    ...VOCABULARY.probeKinds,
    throwaway_kind: {
      completion: true,
      hangs: true,
      confirms: false,
      failAfter: 'downAfter',
      countsForRecovery: true,
    },
  },
  diagnoses: {
    ...VOCABULARY.diagnoses,
    throwaway_wedge: {
      states: ['wedged'],
      evidence: 'failing',
      rank: 3,
      runbook: 'diagnosis-throwaway_wedge',
      alert: 'WedgewatchThrowawayWedge',
      meaning: 'a diagnosis that exists only in this test',
    },
  },
};

describe('a throwaway probe kind and diagnosis', () => {
  it('are validated by the config schemas built from the vocabulary (and rejected without them)', () => {
    expect(probeKindSchema(extended).safeParse('throwaway_kind').success).toBe(true);
    expect(probeKindSchema(VOCABULARY).safeParse('throwaway_kind').success).toBe(false);
    expect(stateOrDiagnosisSchema(extended).safeParse('throwaway_wedge').success).toBe(true);
    const without = stateOrDiagnosisSchema(VOCABULARY).safeParse('throwaway_wedge');
    expect(without.success).toBe(false);
    expect(without.error?.issues[0]?.message).toMatch(/not a state or diagnosis: "throwaway_wedge"/);
  });

  it('are exported: every result series of the kind, and the diagnosis as a pre-created wedge cause', () => {
    const slot = { probe: 'p', kind: 'throwaway_kind', endpoint: 'e', conn: 'fresh' as const };
    const series = probeSeries(slot, 'pd', extended);
    expect(series.map((l) => l.result)).toEqual(Object.keys(PROBE_RESULTS));
    expect(series.every((l) => l.kind === 'throwaway_kind')).toBe(true);
    expect(wedgeCauses(extended)).toContain('throwaway_wedge');
    // The watchdog pre-creates WEDGE_CAUSES: the same derivation over the shipped vocabulary.
    expect([...WEDGE_CAUSES]).toEqual(wedgeCauses(VOCABULARY));
  });

  it('are judged by their traits: a completion kind, failing after downAfter', () => {
    expect(isCompletion('throwaway_kind', extended)).toBe(true);
    expect(isCompletion('throwaway_kind')).toBe(false);
    expect(completionKinds(extended)).toContain('throwaway_kind');
    expect(failThreshold('throwaway_kind', { wedgeAfter: 2, downAfter: 5 }, extended)).toBe(5);
  });

  it('are reported missing from the docs until the diagnoses page, runbooks and alerts have them', () => {
    const texts = {
      diagnoses: readFileSync('docs/diagnoses.md', 'utf8'),
      runbooks: readFileSync('docs/runbooks.md', 'utf8'),
      alerts: readFileSync('alerts/wedgewatch.rules.yml', 'utf8'),
    };
    const got = diagnosisDocProblems(extended, texts);
    expect(got).toContain('docs/diagnoses.md: no row for diagnosis throwaway_wedge');
    expect(got).toContain('runbooks: no row for diagnosis throwaway_wedge');
    expect(got).toContain('runbooks: no section #diagnosis-throwaway_wedge for diagnosis throwaway_wedge');
    expect(got).toContain('alerts: no alert WedgewatchThrowawayWedge for diagnosis throwaway_wedge');
    expect(diagnosisDocProblems(VOCABULARY, texts)).toEqual([]);
  });
});
