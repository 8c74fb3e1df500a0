// The Alertmanager notification templates render a wedge page with everything the on-call needs: target,
// diagnosis, evidence, status page and runbook, through the real amtool.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, run } from './tools.js';

const TEMPLATES = `${ROOT}alerts/wedgewatch.tmpl`;
const dir = mkdtempSync(join(tmpdir(), 'wedgewatch-tmpl-'));

function data(status: 'firing' | 'resolved', annotations: Record<string, string>): string {
  const labels = {
    alertname: 'WedgewatchTargetWedged',
    severity: 'critical',
    target: 'pd',
    instance: 'node1:9787',
  };
  const file = join(dir, `${status}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      receiver: 'pager',
      status,
      alerts: [
        {
          status,
          labels,
          annotations,
          startsAt: '2026-12-01T03:01:31Z',
          endsAt: status === 'resolved' ? '2026-12-01T03:09:02Z' : '0001-01-01T00:00:00Z',
          generatorURL: '',
          fingerprint: '1',
        },
      ],
      groupLabels: { target: 'pd' },
      commonLabels: labels,
      commonAnnotations: {},
      externalURL: 'http://127.0.0.1:9093',
    }),
  );
  return file;
}

const render = async (file: string, text: string, type = 'text') => {
  const res = await run('amtool', [
    'template',
    'render',
    `--template.glob=${TEMPLATES}`,
    `--template.data=${file}`,
    `--template.type=${type}`,
    `--template.text=${text}`,
  ]);
  expect(res.code, res.stderr).toBe(0);
  return res.stdout;
};

const annotations = {
  summary: 'Target pd is wedged: health answers but completions do not finish',
  description: 'wedgewatch node1:9787 declared target pd wedged (value 1).',
  diagnosis: 'kv_bootstrap_thread_dead',
  evidence: 'log kv_bootstrap_dead (nixl_bootstrap_thread_dead) on prefill at 2026-12-01 03:01:30 +0000 UTC',
  status_page: 'http://node1:9787/',
  runbook_url: 'https://wiki.example/wedgewatch/runbooks#wedgewatchtargetwedged',
};

describe('Alertmanager templates', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a page (Slack/PagerDuty text) shows target, diagnosis, evidence, status page and runbook', async () => {
    const out = await render(
      data('firing', annotations),
      '{{ template "wedgewatch.title" . }}\n{{ template "wedgewatch.text" . }}',
    );
    expect(out).toContain('[FIRING:1] pd Target pd is wedged');
    expect(out).toContain('Target: pd (wedgewatch node1:9787)');
    expect(out).toContain('Diagnosis: kv_bootstrap_thread_dead');
    expect(out).toContain(`Evidence: ${annotations.evidence}`);
    expect(out).toContain('Status page: http://node1:9787/');
    expect(out).toContain(`Runbook: ${annotations.runbook_url}`);
  });

  it('the email is HTML with links; a resolved notification says so; missing annotations leave no empty lines', async () => {
    const html = await render(
      data('firing', annotations),
      '{{ template "wedgewatch.email.html" . }}',
      'html',
    );
    expect(html).toContain(`<a href="${annotations.runbook_url}">`);
    expect(html).toContain('<td>kv_bootstrap_thread_dead</td>');
    const { summary, runbook_url } = annotations;
    const out = await render(
      data('resolved', { summary, runbook_url }),
      '{{ template "wedgewatch.text" . }}',
    );
    expect(out).toContain('RESOLVED WedgewatchTargetWedged');
    expect(out).toContain('resolved 03:09:02 UTC');
    expect(out).not.toContain('Diagnosis:');
    expect(out).not.toMatch(/\n\n/);
  });
});
