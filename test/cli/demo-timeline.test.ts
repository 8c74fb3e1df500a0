// The demo's timeline is one subscription to the events journal (issue 25 item 2): detector events and incident
// captures both reach it, routine events stay out, and an unsubscribed timeline hears nothing more.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { journalTimeline } from '../../src/commands/demo-timeline.js';
import { Journal } from '../../src/outputs/journal/journal.js';

const logger = pino({ level: 'silent' });

describe('demo timeline', () => {
  it('shows transitions, confirmations, remediations and incidents from one journal subscription', () => {
    const journal = new Journal({ logger });
    const lines: string[] = [];
    const stop = journalTimeline(journal, (source, message) => lines.push(`${source} ${message}`));
    const add = (type: string, summary: string, data?: Record<string, unknown>) =>
      journal.append({ time: 1, target: 'pd', type, summary, data });
    add('transition', 'ok → wedged (kv_bootstrap_thread_dead): cause');
    add('probe_failing', 'chat failing');
    add('confirm', 'confirmation round: rule on prefill');
    add('incident', 'incident bundle /s/i1');
    add('remediation', 'remediation skipped', { result: 'cooldown' });
    add('remediation', 'remediation restart success', { result: 'success' });
    add('written_by_a_newer_version', 'unknown');
    stop();
    add('transition', 'wedged → ok');
    expect(lines).toEqual([
      'detector pd: state ok → wedged (kv_bootstrap_thread_dead): cause',
      'detector pd: confirmation round: rule on prefill',
      'incidents pd: incident bundle /s/i1',
      'detector pd: remediation restart success',
    ]);
  });
});
