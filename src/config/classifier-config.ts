// What the core needs of a target's config, translated once: the config's shape stays out of the core (the core
// owns ClassifierConfig; config → core, never the reverse).
import type { ClassifierConfig } from '../core/memory.js';
import type { TargetConfig } from './schema.js';

export function classifierConfig(target: TargetConfig): ClassifierConfig {
  return {
    detect: target.detect,
    hops: target.endpoints.map((e) => e.name),
    probes: Object.fromEntries(
      target.probes.map((p) => [
        p.name,
        {
          kind: p.kind,
          ttftObjective: 'ttftObjective' in p ? p.ttftObjective : undefined,
          // The long-input and conversation diagnoses name the length and the rounds (core/verdict/candidates/probe-shapes.ts).
          ...('promptTokens' in p ? { promptTokens: p.promptTokens } : {}),
          ...('rounds' in p ? { rounds: p.rounds } : {}),
        },
      ]),
    ),
    engines: [...new Set([...target.engines.map((e) => e.service), ...target.logs.map((l) => l.service)])],
    ...(target.objectives !== undefined ? { objectives: target.objectives } : {}),
  };
}
