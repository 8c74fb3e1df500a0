// The decode scheduler stops (e.g. a TP-collective desync under the overlap scheduler): no batch lines,
// gauges frozen, get_server_info blocks on the scheduler round trip, requests hang.
import type { FaultDef } from './types.js';

export const decodeStall: FaultDef = {
  name: 'decode_stall',
  summary:
    'the decode scheduler loop stops: no tokens, no batch lines, frozen gauges, get_server_info blocks',
  params: {},
  onEnable(ctl) {
    ctl.setDecodeStalled(true);
  },
  onDisable(ctl) {
    ctl.setDecodeStalled(false);
  },
};
