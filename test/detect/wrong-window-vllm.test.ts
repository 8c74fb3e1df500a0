// kv_corruption at 0.1, 0.5 and 1 against the vLLM simulator (its one server): see wrong-window-cases.ts.
import { startVllmHarness } from './sim-harness.js';
import { wrongWindowProbes, wrongWindowSuite } from './wrong-window-cases.js';

wrongWindowSuite('vllm', 'server', () => startVllmHarness({}, wrongWindowProbes('server')));
