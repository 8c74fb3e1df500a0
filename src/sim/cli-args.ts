// Parsing of the simulator's command-line fault and duration arguments, shared by `sim` and `demo`.
import { parseDuration } from '../config/duration.js';
import { isFaultName } from './faults/registry.js';
import type { FaultName, FaultParams } from './faults/types.js';

/** "NAME" or "NAME:key=value,key=value" (numbers stay numbers). */
export function parseFaultArg(text: string): { name: FaultName; params: FaultParams } {
  const [name, rest] = text.split(/:(.*)/s, 2) as [string, string | undefined];
  if (!isFaultName(name)) throw new Error(`unknown fault ${JSON.stringify(name)}`);
  const params: FaultParams = {};
  for (const pair of rest ? rest.split(',') : []) {
    const m = /^([A-Za-z_]\w*)=(.*)$/.exec(pair.trim());
    if (!m) throw new Error(`fault ${name}: expected key=value, got ${JSON.stringify(pair)}`);
    const n = Number(m[2]);
    params[m[1]!] = m[2] !== '' && Number.isFinite(n) ? n : m[2]!;
  }
  return { name, params };
}

export function parseDurationArg(text: string, flag: string): number {
  const ms = parseDuration(text);
  if (ms === undefined)
    throw new Error(`${flag}: expected a duration like "300s", got ${JSON.stringify(text)}`);
  return ms;
}

export function parsePortBase(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 65530)
    throw new Error(`--port-base: expected a port from 1 to 65530, got ${text}`);
  return n;
}
