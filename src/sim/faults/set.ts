// The enabled faults and their params; the simulator asks it at each hook point.
import { FAULTS, isFaultName } from './registry.js';
import {
  faultDefaults,
  faultEngines,
  type FaultControl,
  type FaultDef,
  type FaultName,
  type FaultParams,
  type ServiceName,
  type ToolCallPlan,
} from './types.js';

export class FaultError extends Error {}

export class FaultSet {
  private readonly enabled = new Map<FaultName, FaultParams>();
  /** When each fault was enabled (Unix ms), for the faults that follow a schedule from then. */
  private readonly since = new Map<FaultName, number>();

  constructor(private readonly ctl: FaultControl) {}

  /** Validates and enables (re-enabling replaces the params); the returned promise settles once applied. */
  enable(name: string, params: FaultParams = {}): Promise<void> {
    if (!isFaultName(name)) throw new FaultError(`unknown fault ${JSON.stringify(name)}`);
    const def = FAULTS[name];
    const engines = faultEngines(def);
    const here = this.ctl.engine ?? 'sglang';
    if (!engines.includes(here)) {
      const flag = (e: string) => (e === 'vllm' ? 'sim --engine vllm' : 'sim');
      throw new FaultError(
        `${name} applies to the ${engines.map((e) => (e === 'vllm' ? 'vLLM' : 'SGLang')).join(' and ')} simulator only (${engines.map(flag).join(', ')}); this one runs ${here === 'vllm' ? 'vLLM' : 'SGLang'}`,
      );
    }
    const unknown = Object.keys(params).filter((k) => !Object.hasOwn(def.params, k));
    if (unknown.length > 0) {
      const known = Object.keys(def.params);
      throw new FaultError(
        `${name}: unknown parameter ${unknown.map((k) => JSON.stringify(k)).join(', ')} (${known.length > 0 ? `it takes ${known.join(', ')}` : 'it takes none'})`,
      );
    }
    const merged = { ...faultDefaults(def), ...params };
    const problem = def.validate?.(merged, this.ctl);
    if (problem) throw new FaultError(`${name}: ${problem}`);
    this.enabled.set(name, merged);
    this.since.set(name, Date.now());
    return Promise.resolve(def.onEnable?.(this.ctl, merged));
  }

  disable(name: string): Promise<void> {
    if (!isFaultName(name)) throw new FaultError(`unknown fault ${JSON.stringify(name)}`);
    const params = this.enabled.get(name);
    if (!params) return Promise.resolve();
    this.enabled.delete(name);
    return Promise.resolve(FAULTS[name].onDisable?.(this.ctl, params));
  }

  /** Forgets a fault without running its onDisable (a restart already undid it). */
  forget(name: FaultName): void {
    this.enabled.delete(name);
  }

  has(name: FaultName): boolean {
    return this.enabled.has(name);
  }

  params(name: FaultName): FaultParams | undefined {
    return this.enabled.get(name);
  }

  snapshot(): Record<string, FaultParams> {
    return Object.fromEntries(this.enabled);
  }

  private *active(): Generator<[FaultDef, FaultParams]> {
    for (const [name, params] of this.enabled) yield [FAULTS[name], params];
  }

  stepFactor(): number {
    let f = 1;
    for (const [def, p] of this.active()) f *= def.stepFactor?.(p) ?? 1;
    return f;
  }

  healthStatus(service: ServiceName): number | undefined {
    for (const [def, p] of this.active()) {
      const s = def.healthStatus?.(service, p);
      if (s !== undefined) return s;
    }
    return undefined;
  }

  healthGenerates(service: ServiceName): boolean {
    for (const [def, p] of this.active()) if (def.healthGenerates?.(service, p)) return true;
    return false;
  }

  abortFrame(): void {
    for (const [def, p] of this.active()) def.onAbortFrame?.(this.ctl, p);
  }

  stallsReusedConnection(): boolean {
    for (const [def, p] of this.active()) if (def.stallsReusedConnection?.(p)) return true;
    return false;
  }

  /** The largest extra wait any fault puts on a reused-connection request of this many prompt tokens. */
  reusedConnectionDelayMs(promptTokens: number): number {
    let ms = 0;
    for (const [def, p] of this.active())
      ms = Math.max(ms, def.reusedConnectionDelayMs?.(promptTokens, p) ?? 0);
    return ms;
  }

  leakToolCalls(calls: ToolCallPlan[], toolChoice?: unknown): string | undefined {
    for (const [def, p] of this.active()) {
      const text = def.leakToolCalls?.(calls, p, toolChoice);
      if (text !== undefined) return text;
    }
    return undefined;
  }

  ignoresToolChoice(toolChoice: unknown): boolean {
    for (const [def, p] of this.active()) if (def.ignoresToolChoice?.(toolChoice, p)) return true;
    return false;
  }

  corruptAnswer(answer: string, recent: readonly string[]): string | undefined {
    for (const [def, p] of this.active()) {
      const wrong = def.corruptAnswer?.(answer, recent, p);
      if (wrong !== undefined) return wrong;
    }
    return undefined;
  }

  holdsRequest(seq: number): boolean {
    for (const [def, p] of this.active()) if (def.holdsRequest?.(seq, p)) return true;
    return false;
  }

  stalledEngine(): { engine: string; running: number } | undefined {
    for (const [def, p] of this.active()) {
      const e = def.stalledEngine?.(p);
      if (e !== undefined) return e;
    }
    return undefined;
  }

  leakedQueue(service: ServiceName): number {
    let n = 0;
    for (const [def, p] of this.active()) n += def.leakedQueue?.(service, p) ?? 0;
    return n;
  }

  holdsPrompt(promptTokens: number): boolean {
    for (const [def, p] of this.active()) if (def.holdsPrompt?.(promptTokens, p)) return true;
    return false;
  }

  corruptStreamedArgs(fragments: readonly string[]): string[] | undefined {
    for (const [def, p] of this.active()) {
      const out = def.corruptStreamedArgs?.(fragments, p);
      if (out !== undefined) return out;
    }
    return undefined;
  }

  reasoningGarbage(): boolean {
    for (const [def, p] of this.active()) if (def.reasoningGarbage?.(p)) return true;
    return false;
  }

  callsDespiteNone(): boolean {
    for (const [def, p] of this.active()) if (def.callsDespiteNone?.(p)) return true;
    return false;
  }

  stallsStructured(): boolean {
    for (const [def, p] of this.active()) if (def.stallsStructured?.(p)) return true;
    return false;
  }

  failsKvLoad(): boolean {
    for (const [def, p] of this.active()) if (def.failsKvLoad?.(p)) return true;
    return false;
  }

  failsKvTransfer(): boolean {
    for (const [def, p] of this.active()) if (def.failsKvTransfer?.(p)) return true;
    return false;
  }

  metricsAbsent(): boolean {
    for (const [def, p] of this.active()) if (def.metricsAbsent?.(p)) return true;
    return false;
  }

  /** The longest pause any fault puts on the engine loop now (ms; 0: it steps). */
  pauseMs(now = Date.now()): number {
    let ms = 0;
    for (const [name, p] of this.enabled) {
      const def = FAULTS[name];
      if (def.pauseMs !== undefined) ms = Math.max(ms, def.pauseMs(now - (this.since.get(name) ?? now), p));
    }
    return ms;
  }

  losesRequest(seq: number): boolean {
    for (const [def, p] of this.active()) if (def.losesRequest?.(seq, p)) return true;
    return false;
  }

  /** The smallest batch cap any fault sets, or undefined. */
  maxRunning(): number | undefined {
    let n: number | undefined;
    for (const [def, p] of this.active()) {
      const m = def.maxRunning?.(p);
      if (m !== undefined) n = Math.min(n ?? m, m);
    }
    return n;
  }

  strandedQueue(service: ServiceName): number {
    let n = 0;
    for (const [def, p] of this.active()) n += def.strandedQueue?.(service, p) ?? 0;
    return n;
  }
}

/**
 * enable/disable for a simulator's API: the fault set's own, each change told as a `fault_on`/`fault_off` event
 * (the demo timeline and the control API's event list show them). enable validates synchronously (a bad name or
 * param throws at the call) and tells the event at once; the returned promise settles when the fault is applied.
 */
export function faultSwitch(
  faults: FaultSet,
  emit: (ev: { service: 'sim'; kind: 'fault_on' | 'fault_off'; message: string }) => void,
): { enable(name: FaultName, params?: FaultParams): Promise<void>; disable(name: FaultName): Promise<void> } {
  return {
    enable(name, params) {
      const applied = faults.enable(name, params);
      emit({
        service: 'sim',
        kind: 'fault_on',
        message: `fault ${name} enabled ${JSON.stringify(faults.params(name))}`,
      });
      return applied;
    },
    async disable(name) {
      const was = faults.has(name);
      await faults.disable(name);
      if (was) emit({ service: 'sim', kind: 'fault_off', message: `fault ${name} disabled` });
    },
  };
}
