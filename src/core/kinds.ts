// Which probe kinds run a completion through the engine: a finished one is evidence the engine is not stuck,
// and failing ones on every hop are a wedge. One predicate, from the vocabulary's traits (pure, no I/O).
export { hangs, isCompletion } from './vocabulary.js';
