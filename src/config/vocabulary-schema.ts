// The config fields that name a word of the vocabulary (a probe kind, a state or diagnosis, a log event class),
// as zod schemas built from a vocabulary (src/core/vocabulary.ts): `check` rejects a word the vocabulary does
// not have, at its path, instead of accepting a typo that then never matches (`incidents.on: [wegded]`).
import { z } from 'zod';
import { isStateOrDiagnosis, probeKindNames, VOCABULARY, type Vocabulary } from '../core/vocabulary.js';

const listed = (names: readonly string[], max = 12) =>
  names.length <= max ? names.join(', ') : `${names.slice(0, max).join(', ')}, …`;

/** A state (wedged, degraded, …) or a diagnosis (keepalive_only, hop:<name>, log:<rule>, …). */
export function stateOrDiagnosisSchema(v: Vocabulary = VOCABULARY) {
  const named = [...v.targetStates, ...Object.keys(v.diagnoses)];
  const prefixes = Object.keys(v.diagnosisTemplates);
  return z
    .string({ error: 'expected a state or diagnosis (a string)' })
    .regex(
      /^[A-Za-z0-9_.:-]{1,64}$/,
      'a state or diagnosis may use letters, digits and _.:- (1 to 64 characters)',
    )
    .refine((s) => isStateOrDiagnosis(s, v), {
      error: (iss) =>
        `not a state or diagnosis: ${JSON.stringify(iss.input)} (one of ${named.join(', ')}, or ${prefixes.map((p) => `${p}<name>`).join(', ')})`,
    });
}

/** A log event class (the `class` of a rule). */
export function logEventClassSchema(v: Vocabulary = VOCABULARY) {
  const classes = Object.keys(v.logEventClasses);
  return z
    .string({ error: 'expected a log event class (a string)' })
    .refine((c) => Object.hasOwn(v.logEventClasses, c), {
      error: (iss) => `not a log event class: ${JSON.stringify(iss.input)} (one of ${listed(classes, 40)})`,
    });
}

/** A probe kind. */
export function probeKindSchema(v: Vocabulary = VOCABULARY) {
  const kinds = probeKindNames(v);
  return z
    .string({ error: 'expected a probe kind (a string)' })
    .refine((k) => Object.hasOwn(v.probeKinds, k), {
      error: (iss) => `must be one of ${kinds.join(', ')}, got ${JSON.stringify(iss.input)}`,
    });
}
