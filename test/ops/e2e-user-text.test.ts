// Acceptance (issue 24, finding 1) with the real binaries: the daemon, Prometheus with the shipped rules and
// Alertmanager. SGLang's tool-call parser echo holding every built-in signature, appended to prefill.log, fires no
// alert. A user who forges the echo's tail and then a NIXL traceback gets an event (carriers are not airtight),
// but a log line alone never pages: the probes pass, so WedgewatchKVBootstrapThreadDead is a warning in chat.
import { appendFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.js';
import { RULE_FIXTURES } from '../fixtures/logs/rule-fixtures.js';
import { errorTexts } from '../../src/sources/logs/json-error-tail.js';
import { promQuery, promQueryRange, startPipeline, type Pipeline } from './pipeline.js';

const VERBATIM = Object.values(RULE_FIXTURES).flat().join('\n');
/** The engine's tail on `text`: str() of the error CPython's json.loads raises on it (json-error-tail.test.ts). */
const TAIL = (text: string) => `JSON parse error: ${errorTexts(text, 'loads')[0]}`;
const TEXT = `[{"name": "write_file", "arguments": {"content": "${VERBATIM}"}}]`;
const ECHO = `[2026-08-10 14:00:01 TP0] Failed to parse JSON part: ${TEXT}, ${TAIL(TEXT)}\n`;
// The user's argument holds a forged tail, then a traceback of its own, before the engine's real tail.
const FORGED_LINES = [
  `[{"name": "x", "arguments": {"a": "`,
  `"}}], JSON parse error: Invalid control character at: line 1 column 77 (char 76)`,
  'Exception in thread Thread-3 (bootstrap_thread):',
  "AssertionError: First message should be b'NixlMsgGuard'. Foreign traffic?",
  `"}}]`,
];
const FORGED = `[2026-08-10 14:00:02 TP0] Failed to parse JSON part: ${FORGED_LINES.join('\n')}, ${TAIL(FORGED_LINES.join('\n'))}\n`;

/** The value of a one-series query, 0 when it has none. */
async function promValue(promUrl: string, expr: string): Promise<number> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`, {
    signal: AbortSignal.timeout(5000),
  });
  const body = (await res.json()) as { data: { result: { value: [number, string] }[] } };
  return Number(body.data.result[0]?.value[1] ?? 0);
}

/** Prometheus has scraped a probe run that started after `ms` (Unix): rules have evaluated data from then on. */
const sawProbeAfter = async (p: Pipeline, ms: number) =>
  (await promValue(p.promUrl, 'max(wedgewatch_probe_last_run_timestamp_seconds)')) > ms / 1000;

const pages = (p: Pipeline) => p.notifications.filter((n) => n.receiver === 'pager' && n.status === 'firing');
const LINES = 'sum(wedgewatch_log_lines_total{service="prefill"})';

describe(
  'user text in an engine log never pages (real Prometheus and Alertmanager)',
  { timeout: 180_000 },
  () => {
    let p: Pipeline;
    beforeAll(async () => {
      p = await startPipeline({ fastTimings: true });
    }, 90_000);
    afterAll(async () => {
      await p?.stop();
    });

    it('the echo fires nothing; a forged traceback between forged tails fires nothing', async () => {
      await waitFor(
        async () =>
          (
            await promQueryRange(
              p.promUrl,
              `wedgewatch_target_state{state="ok"} == 1`,
              p.readyAt - 60_000,
              Date.now(),
            )
          ).length > 0,
        { timeoutMs: 30_000, intervalMs: 250, what: 'target ok in Prometheus' },
      );
      const linesBefore = await promValue(p.promUrl, LINES);
      appendFileSync(p.sim.logFiles.prefill, ECHO);
      const echoLines = ECHO.split('\n').length - 1;
      await waitFor(async () => (await promValue(p.promUrl, LINES)) >= linesBefore + echoLines, {
        timeoutMs: 30_000,
        intervalMs: 250,
        what: 'Prometheus to see the echo read',
      });
      // Two probe rounds later, scraped: any alert the echo could fire has had several rule evaluations.
      const seenAt = Date.now();
      await waitFor(() => sawProbeAfter(p, seenAt + 2000), {
        timeoutMs: 20_000,
        intervalMs: 250,
        what: 'a scraped probe run 2 s after the echo was read',
      });
      // Every alert a log line could raise; not WedgewatchDown (`up == 0`: Prometheus's own scrape of the daemon
      // timing out on a loaded host, which no line can cause; it went pending once at load 17).
      expect(
        await promQuery(p.promUrl, 'ALERTS{alertname=~"Wedgewatch.*",alertname!="WedgewatchDown"}'),
      ).toEqual([]);
      expect(await promQuery(p.promUrl, 'sum(wedgewatch_log_events_total{service="prefill"}) > 0')).toEqual(
        [],
      );
      expect(pages(p)).toEqual([]);

      // The forged traceback sits between the model's two tails: the carrier holds it until the second tail says it
      // was the model's (issue 37 item 1), so it raises nothing at all, not even the warning half.
      const linesBeforeForged = await promValue(p.promUrl, LINES);
      appendFileSync(p.sim.logFiles.prefill, FORGED);
      const forgedLines = FORGED.split('\n').length - 1;
      await waitFor(async () => (await promValue(p.promUrl, LINES)) >= linesBeforeForged + forgedLines, {
        timeoutMs: 30_000,
        intervalMs: 250,
        what: 'Prometheus to see the forged lines read',
      });
      // Confirmation rounds ran (confirmInterval 1 s): several scraped probe runs later, still nothing.
      const readAt = Date.now();
      await waitFor(() => sawProbeAfter(p, readAt + 8000), {
        timeoutMs: 30_000,
        intervalMs: 250,
        what: 'a scraped probe run 8 s after the forged lines were read',
      });
      // Every alert a log line could raise; not WedgewatchDown (`up == 0`: Prometheus's own scrape of the daemon
      // timing out on a loaded host, which no line can cause; it went pending once at load 17).
      expect(
        await promQuery(p.promUrl, 'ALERTS{alertname=~"Wedgewatch.*",alertname!="WedgewatchDown"}'),
      ).toEqual([]);
      expect(await promQuery(p.promUrl, 'sum(wedgewatch_log_events_total{service="prefill"}) > 0')).toEqual(
        [],
      );
      expect(await promQuery(p.promUrl, 'wedgewatch_target_wedged == 1')).toEqual([]);
      expect(pages(p)).toEqual([]);
    });
  },
);
