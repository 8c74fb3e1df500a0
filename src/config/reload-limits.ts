// What a reload cannot change in place. A new listen address would need a second listener and a hand-over of
// every scraper and the TLS watcher; a new stateDir would need the journal, log offsets, remediation history and
// incident bundles moved while followers and the journal write to them. Both are refused, whole, with a
// reload-failed that says why (docs/decisions.md): the running configuration keeps working, and the operator
// restarts the daemon when the change is meant. Never half-applied, never silently ignored.
import { resolve } from 'node:path';
import type { Config } from './schema.js';

export interface ReloadLimitOptions {
  /** --web.listen-address was given: it overrides the config's listen address, so a change there is moot. */
  listenFlag?: boolean;
}

/** Problems (one line each) that make `next` unloadable over `current` without a restart; empty when none. */
export function restartOnlyChanges(current: Config, next: Config, opts: ReloadLimitOptions = {}): string[] {
  const problems: string[] = [];
  if (!opts.listenFlag && current.web.listenAddress !== next.web.listenAddress) {
    problems.push(
      `web.listenAddress: changed from ${JSON.stringify(current.web.listenAddress)} to ${JSON.stringify(next.web.listenAddress)}; a new listen address needs a restart (the daemon keeps listening on the old one)`,
    );
  }
  const agentWas = current.agent?.listenAddress;
  const agentIs = next.agent?.listenAddress;
  if (agentWas !== agentIs) {
    problems.push(
      `agent.listenAddress: changed from ${agentWas === undefined ? 'no agent port' : JSON.stringify(agentWas)} to ${agentIs === undefined ? 'no agent port' : JSON.stringify(agentIs)}; opening or moving the agent-check port needs a restart (HAProxy keeps checking the old one)`,
    );
  }
  if (resolve(current.stateDir) !== resolve(next.stateDir)) {
    problems.push(
      `stateDir: changed from ${JSON.stringify(current.stateDir)} to ${JSON.stringify(next.stateDir)}; a new state directory needs a restart (move the journal, log offsets and remediation history there while the daemon is stopped)`,
    );
  }
  return problems;
}
