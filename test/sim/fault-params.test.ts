// Every fault declares its parameters: `sim --help` and GET /faults are made from them, and a parameter a fault
// does not take is refused instead of silently ignored.
import { describe, expect, it } from 'vitest';
import { faultHelp } from '../../src/sim/faults/help.js';
import { FAULTS } from '../../src/sim/faults/registry.js';
import { FaultError, FaultSet } from '../../src/sim/faults/set.js';
import { faultEngines, type FaultControl } from '../../src/sim/faults/types.js';

const ctl: FaultControl = {
  hasProxy: true,
  killBootstrapThread: () => {},
  setDecodeStalled: () => {},
  crashService: async () => {},
  restartService: async () => {},
  releaseHeld: () => {},
  releaseStructured: () => {},
};

describe('fault parameters', () => {
  it('every fault has a summary and a help line for each parameter, all in the help text', () => {
    const help = faultHelp();
    for (const f of Object.values(FAULTS)) {
      expect(f.summary.trim(), f.name).not.toBe('');
      // A fault for one simulator only says which after its name.
      const engines = faultEngines(f);
      const only =
        engines.length === 1 ? ` \\(${engines[0] === 'vllm' ? 'vLLM' : 'SGLang'} only[^)]*\\)` : '';
      expect(help).toMatch(new RegExp(`^  ${f.name}${only}\\n {6}\\S`, 'm'));
      for (const [key, p] of Object.entries(f.params)) {
        expect(p.help.trim(), `${f.name}.${key}`).not.toBe('');
        expect(help).toContain(`${key} (default ${String(p.default)}): ${p.help}`);
      }
    }
  });

  it('runs a fault with its declared defaults, and refuses a parameter it does not take', async () => {
    const set = new FaultSet(ctl);
    await set.enable('slow');
    expect(set.params('slow')).toEqual({ factor: 2 });
    expect(() => set.enable('slow', { facotr: 3 })).toThrow(FaultError);
    expect(() => set.enable('slow', { facotr: 3 })).toThrow(/unknown parameter "facotr" \(it takes factor\)/);
    expect(() => set.enable('decode_stall', { service: 'x' })).toThrow(/it takes none/);
  });
});
