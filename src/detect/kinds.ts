// Which probe kinds run a completion through the engine: a finished one is evidence the engine is not stuck,
// and failing ones on every hop are a wedge. Shared by the reducer and the verdict (pure, no I/O).
import type { ProbeKind } from '../signals.js';

export const isCompletion = (k: ProbeKind | undefined) =>
  k === 'chat' || k === 'toolcall' || k === 'canary' || k === 'structured';
