// The fault list of `wedgewatch sim --help`, made from the registry so a new fault file shows up by itself.
import { FAULTS } from './registry.js';

export function faultHelp(): string {
  const lines = ['Faults (--fault NAME[:key=value,...], or POST /faults/NAME on the control port):'];
  for (const f of Object.values(FAULTS)) {
    lines.push(`  ${f.name}`, `      ${f.summary}`);
    for (const [key, p] of Object.entries(f.params))
      lines.push(`      ${key} (default ${String(p.default)}): ${p.help}`);
  }
  return lines.join('\n');
}
