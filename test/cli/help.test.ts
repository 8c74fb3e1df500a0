// A newcomer's first contact: every command's --help ends with an example, and `sim --help` names every fault
// of the registry with its parameters.
import { describe, expect, it } from 'vitest';
import { LOG_ENGINES } from '../../src/config/log-engines.js';
import { FAULTS } from '../../src/sim/faults/registry.js';
import { faultEngines } from '../../src/sim/faults/types.js';
import { runCli } from '../helpers/cli.js';

const COMMANDS = ['run', 'check', 'replay', 'sim', 'demo', 'verify', 'incidents'];

describe('--help', () => {
  it('the top level lists every command and has an example', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const c of COMMANDS) expect(r.stdout).toMatch(new RegExp(`^  ${c}\\s+\\S`, 'm'));
    expect(r.stdout).toMatch(/^Example:\n {2}wedgewatch \S/m);
  });

  it.each(COMMANDS)('%s --help shows its options and an example of itself', async (c) => {
    const r = await runCli([c, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Usage: wedgewatch ${c} `, 'm'));
    expect(r.stdout).toMatch(new RegExp(`^Examples?:\\n {2}wedgewatch ${c} \\S`, 'm'));
  });

  it('`replay --help` lists every engine (issue 40: the engines of examples/, each with its default packs)', async () => {
    const r = await runCli(['replay', '--help']);
    expect(r.code).toBe(0);
    const listed = /^Engines \(--engine[^)]*\): (.+)$/m.exec(r.stdout)?.[1]?.split(', ');
    expect(listed).toEqual([...LOG_ENGINES]);
    for (const e of ['vllm', 'llamacpp', 'ollama', 'trtllm', 'dynamo', 'tgi', 'gateway'])
      expect(listed).toContain(e);
  });

  it('`help sim` lists every registered fault with its parameters', async () => {
    const r = await runCli(['help', 'sim']);
    expect(r.code).toBe(0);
    for (const f of Object.values(FAULTS)) {
      // A fault for one simulator only says which after its name.
      const engines = faultEngines(f);
      const only =
        engines.length === 1 ? ` \\(${engines[0] === 'vllm' ? 'vLLM' : 'SGLang'} only[^)]*\\)` : '';
      expect(r.stdout).toMatch(new RegExp(`^  ${f.name}${only}\\n {6}\\S`, 'm'));
      for (const key of Object.keys(f.params))
        expect(r.stdout).toMatch(new RegExp(`^ {6}${key} \\(default `, 'm'));
    }
  });
});
