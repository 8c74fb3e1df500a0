// exporter-toolkit's rate_limit: one token bucket for every request (golang.org/x/time/rate: rate.Every(interval),
// burst), checked before auth; an empty bucket answers 429.
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly intervalMs: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  /** Takes a token if there is one. */
  allow(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + (t - this.last) / this.intervalMs);
    this.last = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Milliseconds until the next token. */
  waitMs(): number {
    return Math.max(0, (1 - this.tokens) * this.intervalMs);
  }
}
