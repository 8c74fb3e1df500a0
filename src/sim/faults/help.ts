// The fault list of `wedgewatch sim --help`, made from the registry so a new fault file shows up by itself.
import { FAULTS } from './registry.js';
import { faultEngines } from './types.js';

const ONLY = { sglang: ' (SGLang only)', vllm: ' (vLLM only: --engine vllm)' } as const;

export function faultHelp(): string {
  const lines = ['Faults (--fault NAME[:key=value,...], or POST /faults/NAME on the control port):'];
  for (const f of Object.values(FAULTS)) {
    const engines = faultEngines(f);
    lines.push(`  ${f.name}${engines.length === 1 ? ONLY[engines[0]!] : ''}`, `      ${f.summary}`);
    for (const [key, p] of Object.entries(f.params))
      lines.push(`      ${key} (default ${String(p.default)}): ${p.help}`);
  }
  return lines.join('\n');
}
