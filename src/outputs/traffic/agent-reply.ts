// The line HAProxy's agent check reads (configuration.txt §5.2 "agent-check", Debian haproxy 2.6; parsed by
// tcpcheck_agent_expect_reply in src/tcpcheck.c, haproxy/haproxy@50872daa line 995): words separated by spaces,
// tabs or commas, in any order, ending at the first CR or LF; a description after '#' is shown when a health
// status is given. "up"/"down" set the operational state (down at once: check->health = 0), "ready"/"drain"/
// "maint" the administrative one, "N%" the weight. Only the agent can undo what it said, so every answer
// states the health status, and the admin word whenever this agent manages the admin state.
import type { AgentConfig } from '../../config/traffic-schema.js';
import type { TrafficAnswer } from './view.js';

/** The answer's kind, as counted in wedgewatch_agent_checks_total{answer}. */
export type AgentAnswer = 'up' | 'down' | 'drain' | 'maint';

/** Printable ASCII only, no '#', CR or LF, at most 120 characters: it sits inside one agent line. */
function description(text: string): string {
  return text
    .replace(/[^\x20-\x7e]|#/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 120);
}

export function agentReply(
  a: TrafficAnswer,
  cfg: Pick<AgentConfig, 'unready' | 'degradedWeight'>,
): { line: string; answer: AgentAnswer } {
  const why = `${a.state}${a.diagnosis !== null ? ` ${a.diagnosis}` : ''}`;
  if (a.inRotation) {
    const words = ['up'];
    // Undoes a drain or maint this agent may have said before (only the agent can, configuration.txt).
    if (cfg.unready !== 'down') words.push('ready');
    if (cfg.degradedWeight !== undefined)
      words.push(a.state === 'degraded' ? `${cfg.degradedWeight}%` : '100%');
    const note = a.held
      ? `held in: not ready (${why}) but the last of pool ${a.pool ?? ''} in rotation`
      : a.state === 'ok'
        ? ''
        : why;
    return { line: `${words.join(' ')}${note === '' ? '' : ` #${description(note)}`}\n`, answer: 'up' };
  }
  if (cfg.unready === 'down') return { line: `down #${description(why)}\n`, answer: 'down' };
  return { line: `${cfg.unready}\n`, answer: cfg.unready };
}
