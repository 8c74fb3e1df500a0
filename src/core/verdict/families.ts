// The candidate families the verdict asks, in the order that breaks ties between candidates of one evidence kind
// (the order the verdict's branches had). The kind itself ranks them (EVIDENCE in vocabulary.ts, strongest first),
// so a new family is a new file plus an entry here, placed among its own kind.
import { wrongOutput } from './candidates/answers.js';
import { abortCounters, kvTransferFailing } from './candidates/counters.js';
import { engineCrawling } from './candidates/crawl.js';
import { engineStalled, healthGenerateFailing, rankStalled } from './candidates/engine.js';
import { completionsFailing, connectionRefused, healthFailing } from './candidates/failing.js';
import { toolcallLeak } from './candidates/format.js';
import { completionsHung } from './candidates/hung.js';
import { queueLeakFloor, queueLeakIdle } from './candidates/leak.js';
import { abortLines, slow } from './candidates/load.js';
import { hopFailing, keepaliveOnly, structuredOutputStalled } from './candidates/path.js';
import { intermittent } from './candidates/pattern.js';
import { probeShapes } from './candidates/probe-shapes.js';
import { pdPairHalfFailed, requestsOrphaned, routerStuckCandidate } from './candidates/router.js';
import { criticalLines } from './candidates/signature.js';
import { gpuFault, processStopped, rankMissing, stalledOnNode, threadLost } from './candidates/node.js';
import type { Family } from './types.js';
import { incidentWarning } from './candidates/warning.js';
import { engineProgressStopped, requestsLost } from './candidates/progress.js';
import { stallsRecurring } from './candidates/episodes.js';
import { engineSaturated } from './candidates/saturation.js';

export type { Candidate, Family, Symptoms } from './types.js';

export const FAMILIES: readonly Family[] = [
  // signature
  criticalLines,
  // counter
  kvTransferFailing,
  // engine
  gpuFault,
  threadLost,
  processStopped,
  rankMissing,
  healthGenerateFailing,
  engineCrawling,
  queueLeakFloor,
  stalledOnNode,
  engineStalled,
  engineProgressStopped,
  rankStalled,
  queueLeakIdle,
  requestsLost,
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
  stallsRecurring,
  // failing: a hang first, so that a round with both names the hang (equal evidence, earliest wins)
  completionsHung,
  completionsFailing,
  healthFailing,
  connectionRefused,
  // format
  toolcallLeak,
  // load
  engineSaturated,
  slow,
  abortCounters,
  abortLines,
];
