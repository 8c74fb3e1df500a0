// The grammar backend stalls (an xgrammar compile that never returns, a stuck grammar queue): requests with a
// response_format wait forever before their first token while plain chat keeps working. Disabling the fault
// releases them.
import type { FaultDef } from './types.js';

export const grammarStall: FaultDef = {
  name: 'grammar_stall',
  summary: 'structured-output (response_format) requests never start; plain chat is unaffected',
  params: {},
  stallsStructured() {
    return true;
  },
  onDisable(ctl) {
    ctl.releaseStructured();
  },
};
