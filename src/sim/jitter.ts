// Per-step timing noise for the simulator (`--jitter`): each decode step and prefill forward is multiplied by
// exp(slow + fast), where `fast` is fresh per step (kernel-time spread) and `slow` drifts over about a second
// (an Ornstein–Uhlenbeck process: clocks, neighbours on a shared GPU, thermal state). Per-step noise alone
// averages out over a few hundred tokens; the drift is what makes one trial differ from the next, as run-to-run
// spread does on real servers (docs/decisions.md, "Simulator jitter").
import { mulberry32 } from './prng.js';

export interface JitterOptions {
  /** Standard deviation of the log step time, for both parts (0.05 ≈ 5 % run-to-run spread). */
  sd: number;
  /** Seed, so a run can be replayed (default: from the clock). */
  seed?: number;
  /** Drift time constant (ms, default 1000). */
  tauMs?: number;
  now?: () => number;
}

/** Returns a function giving the multiplier for the next step (1 when sd is 0). */
export function stepJitter(o: JitterOptions): () => number {
  if (!(o.sd > 0)) return () => 1;
  const rand = mulberry32(o.seed ?? Date.now());
  const gauss = () => {
    // Box–Muller; 1 - u keeps log() away from 0.
    const u = 1 - rand();
    const v = rand();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  const now = o.now ?? (() => performance.now());
  const tau = o.tauMs ?? 1000;
  let slow = gauss() * o.sd;
  let last = now();
  return () => {
    const t = now();
    // Exact OU update over the elapsed time: keeps the stationary sd at o.sd whatever the step rate.
    const keep = Math.exp(-Math.max(0, t - last) / tau);
    last = t;
    slow = slow * keep + Math.sqrt(1 - keep * keep) * o.sd * gauss();
    return Math.exp(slow + o.sd * gauss());
  };
}
