// The demo's timeline is one subscription to the events journal (issue 25 item 2): detector events and incident
// captures both reach it, routine events stay out, and an unsubscribed timeline hears nothing more.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { journalTimeline, timelineSource } from '../../src/commands/demo-timeline.js';
import { readJournalEntry, type NewJournalEvent } from '../../src/outputs/journal/events.js';
import { Journal } from '../../src/outputs/journal/journal.js';

const logger = pino({ level: 'silent' });

describe('demo timeline', () => {
  it('shows transitions, confirmations, remediations and incidents from one journal subscription', () => {
    const journal = new Journal({ logger });
    const lines: string[] = [];
    const stop = journalTimeline(journal, (source, message) => lines.push(`${source} ${message}`));
    const add = (e: Omit<NewJournalEvent, 'time' | 'target'>) =>
      journal.append({ time: 1, target: 'pd', ...e } as NewJournalEvent);
    const transition = { from: 'ok', to: 'wedged', diagnosis: null, cause: 'c' } as const;
    const run = { action: 'restart', argv: ['true'], diagnosis: 'kv_bootstrap_thread_dead' };
    add({ type: 'transition', summary: 'ok → wedged (kv_bootstrap_thread_dead): cause', data: transition });
    add({
      type: 'probe_failing',
      summary: 'chat failing',
      data: { probe: 'chat', endpoint: 'e', conn: 'fresh', result: 'timeout', streak: 1 },
    });
    add({ type: 'confirm', summary: 'confirmation round: rule on prefill', data: { reason: 'r' } });
    add({
      type: 'incident',
      summary: 'incident bundle /s/i1',
      data: { result: 'captured', files: 1, bytes: 1, durationMs: 1 },
    });
    add({ type: 'remediation', summary: 'remediation skipped', data: { ...run, result: 'cooldown' } });
    add({ type: 'remediation', summary: 'remediation restart success', data: { ...run, result: 'success' } });
    // What a newer version wrote reads back as `unknown`: left out.
    expect(timelineSource(readJournalEntry({ seq: 9, time: 1, type: 'written_by_a_newer_version' })!)).toBe(
      undefined,
    );
    stop();
    add({ type: 'transition', summary: 'wedged → ok', data: { ...transition, from: 'wedged', to: 'ok' } });
    expect(lines).toEqual([
      'detector pd: state ok → wedged (kv_bootstrap_thread_dead): cause',
      'detector pd: confirmation round: rule on prefill',
      'incidents pd: incident bundle /s/i1',
      'detector pd: remediation restart success',
    ]);
  });
});
