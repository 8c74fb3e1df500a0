// One line a person reads for each detector event: the daemon's journal summary (src/watchdog.ts) and replay's
// timeline (src/commands/replay-timeline.ts) say the same thing in the same words. Pure wording; no I/O.
import type { DetectEvent } from './memory.js';

export interface EventTextOptions {
  /**
   * The engine's throughput seen during a stall (replay reads it from the stats lines around it): printed beside
   * what the engine holds, so "0 tokens/s" reads as the engine's own word.
   */
  tokensPerSecond?: number;
}

const secs = (ms: number) => `${Math.round(ms / 1000)} s`;

/** What the engine holds, naming only the queues that hold something beyond the running requests. */
function held(e: Extract<DetectEvent, { type: 'engine_stalled' }>): string {
  return [
    `${e.running} running`,
    ...(e.queued > 0 ? [`${e.queued} queued`] : []),
    ...(e.transferQueue > 0 ? [`${e.transferQueue} in transfer`] : []),
    ...(e.preallocQueue > 0 ? [`${e.preallocQueue} bootstrapping`] : []),
  ].join(', ');
}

export function eventText(e: DetectEvent, opts: EventTextOptions = {}): string {
  switch (e.type) {
    case 'transition':
      return `${e.from} → ${e.to}${e.diagnosis ? ` (${e.diagnosis})` : ''}: ${e.cause}`;
    case 'diagnosis':
      return `${e.state}: diagnosis ${e.from ?? '-'} → ${e.to ?? '-'}: ${e.cause}`;
    case 'critical_log':
      return `${e.service}: ${e.rule}: ${e.line.split('\n')[0]}${e.rootCause !== undefined ? ` (root cause: ${e.rootCause})` : ''}`;
    case 'critical_confirmed':
      return `${e.rule} confirmed by ${e.by}`;
    case 'critical_unconfirmed':
      return `${e.rule} not confirmed: ${e.by}`;
    case 'probe_failing':
      return `${e.probe} on ${e.endpoint}/${e.conn} failing: ${e.result}, ${e.streak} in a row${e.error ? ` (${e.error})` : ''}`;
    case 'probe_recovered':
      return `${e.probe} on ${e.endpoint}/${e.conn} passing again`;
    case 'engine_stalled': {
      const tps = opts.tokensPerSecond !== undefined ? `, ${Math.round(opts.tokensPerSecond)} tokens/s` : '';
      return `engine_stalled: ${held(e)}${tps} for ${secs(e.sinceMs)} on ${e.service}`;
    }
    case 'engine_progress':
      return `${e.service} makes progress again`;
    case 'engine_crawling':
      return `${e.service}${e.rank !== undefined ? ` rank ${e.rank}` : ''}: ${e.running} running at ${Math.round(e.ratio * 1000) / 10} % of its own tokens per request for ${secs(e.sinceMs)}`;
    case 'node':
      return e.text;
    case 'rank_stalled':
      return `rank_stalled: rank ${e.rank} holds ${e.running} running with no progress for ${secs(e.sinceMs)} on ${e.service} while the others progress`;
  }
}
