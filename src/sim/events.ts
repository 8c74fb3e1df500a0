// The simulator's event list (what the demo timeline and GET /events show): a bounded ring and its listeners.
import type { SimEvent } from './pd.js';

const EVENT_RING = 500;

export class SimEvents {
  private readonly ring: SimEvent[] = [];
  private readonly listeners = new Set<(ev: SimEvent) => void>();

  readonly emit = (e: Omit<SimEvent, 'at'>): void => {
    const ev = { at: Date.now(), ...e };
    this.ring.push(ev);
    if (this.ring.length > EVENT_RING) this.ring.shift();
    for (const l of this.listeners) l(ev);
  };

  list(): SimEvent[] {
    return [...this.ring];
  }

  onEvent(fn: (ev: SimEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  clear(): void {
    this.listeners.clear();
  }
}
