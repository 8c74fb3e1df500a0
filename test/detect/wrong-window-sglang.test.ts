// kv_corruption at 0.1, 0.5 and 1 against the SGLang PD simulator (router hop): see wrong-window-cases.ts.
import { startHarness } from './sim-harness.js';
import { wrongWindowProbes, wrongWindowSuite } from './wrong-window-cases.js';

wrongWindowSuite('sglang', 'router', () => startHarness({}, wrongWindowProbes('router')));
