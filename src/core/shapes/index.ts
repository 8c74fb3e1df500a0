// The candidate families the verdict asks, in the order that breaks ties between candidates of one evidence kind
// (the order the verdict's branches had). The kind itself ranks them (EVIDENCE in vocabulary.ts, strongest first),
// so a new family is a new file plus an entry here, placed among its own kind.
import { wrongOutput } from './answers.js';
import { abortCounters, kvTransferFailing } from './counters.js';
import { engineCrawling } from './crawl.js';
import { engineStalled, healthGenerateFailing, rankStalled } from './engine.js';
import { completionsFailing, connectionRefused, healthFailing } from './failing.js';
import { toolcallLeak } from './format.js';
import { completionsHung } from './hung.js';
import { queueLeakFloor, queueLeakIdle } from './leak.js';
import { abortLines, slow } from './load.js';
import { hopFailing, keepaliveOnly, structuredOutputStalled } from './path.js';
import { intermittent } from './pattern.js';
import { probeShapes } from './probe-shapes.js';
import { pdPairHalfFailed, requestsOrphaned, routerStuckCandidate } from './router.js';
import { criticalLines } from './signature.js';
import type { Family } from './types.js';
import { incidentWarning } from './warning.js';

export type { Candidate, Family, Symptoms } from './types.js';

export const FAMILIES: readonly Family[] = [
  // signature
  criticalLines,
  // counter
  kvTransferFailing,
  // engine
  healthGenerateFailing,
  engineCrawling,
  queueLeakFloor,
  engineStalled,
  rankStalled,
  queueLeakIdle,
  // router
  pdPairHalfFailed,
  routerStuckCandidate,
  requestsOrphaned,
  // answer
  wrongOutput,
  // path
  probeShapes,
  structuredOutputStalled,
  keepaliveOnly,
  hopFailing,
  // warning
  incidentWarning,
  // pattern
  intermittent,
  // failing: a hang first, so that a round with both names the hang (equal evidence, earliest wins)
  completionsHung,
  completionsFailing,
  healthFailing,
  connectionRefused,
  // format
  toolcallLeak,
  // load
  slow,
  abortCounters,
  abortLines,
];
