// The reasoning channel as engines send it (issue 41, item 5): vLLM's `reasoning` and SGLang's `reasoning_content`
// both read, never twice; the simulators send what their engine sends; a model that does not stop thinking is
// `reasoning_runaway`, not "raise maxTokens"; a tool call written in the reasoning is a leak.
import { afterEach, describe, expect, it } from 'vitest';
import { judgeReply, type Question } from '../../src/sources/probes/answer.js';
import { reasoningText } from '../../src/sources/probes/reasoning-field.js';
import { loopUnit, runawayOf } from '../../src/sources/probes/runaway.js';
import { startSim, type Sim } from '../../src/sim/index.js';
import { startVllmSim, type VllmSim } from '../../src/sim/vllm/index.js';
import { runOnce } from './fixtures.js';

const echo: Question = { kind: 'echo', prompt: 'Repeat exactly: ABC-DEFG', expected: 'ABC-DEFG' };

describe('reasoningText', () => {
  it('reads vLLM `reasoning` and SGLang `reasoning_content`; the new name wins when both carry one text', () => {
    expect(reasoningText({ reasoning: 'a' })).toBe('a');
    expect(reasoningText({ reasoning_content: 'b' })).toBe('b');
    expect(reasoningText({ reasoning: 'a', reasoning_content: 'a' })).toBe('a');
    expect(reasoningText({ reasoning: null, reasoning_content: 'b' })).toBe('b');
    expect(reasoningText({ content: 'c' })).toBeUndefined();
  });
});

describe('runaway reasoning', () => {
  it('a `</think>` loop after the right answer is a runaway, not a setting', () => {
    const r = { answer: `ABC-DEFG${'</think>'.repeat(6)}`, reasoning: '', finishReason: 'length' };
    const v = judgeReply(echo, r, 8);
    expect(v).toMatchObject({ ok: false, result: 'reasoning_runaway' });
    expect(v.ok === false && v.message).toContain('`</think>` 6 times in content');
    expect(v.ok === false && v.message).not.toContain('raise maxTokens');
  });

  it('reasoning that goes on after the right answer to max_tokens is a runaway', () => {
    const r = {
      answer: 'ABC-DEFG',
      reasoning: ' Wait, let me',
      finishReason: 'length',
      reasoningAfterAnswer: true,
    };
    expect(judgeReply(echo, r, 8)).toMatchObject({ ok: false, result: 'reasoning_runaway' });
    // The same reply finished by the model itself (stop) is an answer with a late thought: no runaway.
    expect(judgeReply(echo, { ...r, finishReason: 'stop' }, 8)).toEqual({ ok: true });
  });

  it('a looped phrase instead of an answer is a runaway; thinking in words that is cut is still the setting', () => {
    const loop = { answer: '', reasoning: ' Let me check again.'.repeat(8), finishReason: 'length' };
    const v = judgeReply(echo, loop, 32);
    expect(v).toMatchObject({ ok: false, result: 'reasoning_runaway' });
    expect(v.ok === false && v.message).toContain('"Let me check again." 8 times');
    const thinking = {
      answer: '',
      reasoning: 'The user wants the nonce repeated exactly, so I should copy the letters',
      finishReason: 'length',
    };
    expect(judgeReply(echo, thinking, 16)).toMatchObject({ ok: false, result: 'bad_response' });
    expect(runawayOf(thinking)).toBeUndefined();
  });

  it('a loop inside an unclosed <think> block in content is a runaway', () => {
    const r = { answer: `<think>${' hmm ok'.repeat(10)}`, reasoning: '', finishReason: 'length' };
    expect(runawayOf(r)).toMatch(/^the thinking block repeats "hmm ok" 10 times/);
  });

  it('garbage in the reasoning stays wrong_output (broken decoding, not a loop)', () => {
    const garbage = { answer: '', reasoning: 'Ġ\uFFFD#@ĊĊ}{'.repeat(20), finishReason: 'length' };
    expect(judgeReply(echo, garbage, 64)).toMatchObject({ ok: false, result: 'wrong_output' });
  });

  it('loopUnit needs three repeats covering half the words looked at', () => {
    expect(loopUnit('a b c a b c a b c')).toEqual({ unit: 'a b c', repeats: 3 });
    expect(loopUnit('a b c a b c')).toBeUndefined();
    expect(loopUnit('one two three four five six seven x y x y x y')).toBeUndefined();
    expect(loopUnit('')).toBeUndefined();
  });
});

let sglang: Sim | undefined;
let vllm: VllmSim | undefined;
afterEach(async () => {
  await sglang?.stop();
  await vllm?.stop();
  sglang = undefined;
  vllm = undefined;
});

/** One streamed chat request's raw SSE text (bounded: the simulator finishes at max_tokens). */
async function rawStream(url: string, content: string): Promise<string> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', stream: true, max_tokens: 8, messages: [{ role: 'user', content }] }),
  });
  return await res.text();
}

describe('the simulators send what their engine sends', () => {
  it('vLLM streams `reasoning`, SGLang `reasoning_content`', async () => {
    vllm = await startVllmSim({
      faults: [{ name: 'reasoning_runaway', params: { shape: 'reasoning_loop' } }],
    });
    const v = await rawStream(vllm.urls.server, 'Repeat exactly: ABC-DEFG');
    expect(v).toContain('"reasoning":" Wait"');
    expect(v).not.toContain('reasoning_content');
    sglang = await startSim({ faults: [{ name: 'reasoning_runaway', params: { shape: 'reasoning_loop' } }] });
    const s = await rawStream(sglang.urls.router, 'Repeat exactly: ABC-DEFG');
    expect(s).toContain('"reasoning_content":" Wait"');
    expect(s).not.toContain('"reasoning":');
  });

  it.each(['think_loop', 'reasoning_loop'])(
    'reasoning_runaway shape=%s: the canary reads reasoning_runaway on both simulators',
    async (shape) => {
      vllm = await startVllmSim({ faults: [{ name: 'reasoning_runaway', params: { shape } }] });
      const v = await runOnce(vllm.urls.server, 'canary', { probe: { timeout: '5s' } });
      expect(v.signal.result).toBe('reasoning_runaway');
      sglang = await startSim({ faults: [{ name: 'reasoning_runaway', params: { shape } }] });
      const s = await runOnce(sglang.urls.router, 'canary', { probe: { timeout: '5s' } });
      expect(s.signal.result).toBe('reasoning_runaway');
      expect(s.signal.error).not.toContain('raise maxTokens');
    },
  );

  it('toolcall_in_reasoning: a call written in the reasoning is a leak on both simulators, streamed or not', async () => {
    for (const start of [
      async () => (vllm = await startVllmSim({ faults: ['toolcall_in_reasoning'] })).urls.server,
      async () => (sglang = await startSim({ faults: ['toolcall_in_reasoning'] })).urls.router,
    ]) {
      const url = await start();
      const r = await runOnce(url, 'toolcall', {
        probe: { timeout: '10s', cells: ['auto', 'auto/nonstream'] },
      });
      expect(r.signal.result).toBe('toolcall_leak');
      expect(r.signal.detail?.cells?.map((c) => c.result)).toEqual(['toolcall_leak', 'toolcall_leak']);
      expect(r.signal.error).toMatch(
        /hermes tool-call markup "<tool_call>.*" in the reasoning \(0 structured tool_calls\)/,
      );
    }
  });
});
