// Every tool-call markup family (src/sources/probes/leak-markup.ts, README "Tool-call markup families") is found in
// a leaked call written the way its parser upstream expects it, and none of them in the probes' healthy answers.
import { describe, expect, it } from 'vitest';
import { FAMILY_MARKUP, findMarkup, type MarkupFamily } from '../../src/sources/probes/leak-markup.js';
import { fillerText } from '../../src/sources/probes/prompt-text.js';
import { LARGE_NOTE } from '../../src/sources/probes/toolcall.js';

/** One leaked call per family, in the markup of the parser file named beside the family's pattern. */
const SAMPLES: Record<MarkupFamily, string> = {
  deepseek: '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_current_time',
  hermes: '<tool_call>\n{"name": "get_current_time", "arguments": {"timezone": "UTC"}}\n</tool_call>',
  llama: '<|python_tag|>{"name": "get_current_time", "parameters": {"timezone": "UTC"}}',
  pythonic: '[get_current_time(timezone="UTC")]',
  mistral: '[TOOL_CALLS] [{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]',
  kimi: '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_current_time:0<|tool_call_argument_begin|>{}',
  glm: '<tool_call>get_current_time\n<arg_key>timezone</arg_key>\n<arg_value>UTC</arg_value>\n</tool_call>',
  'gpt-oss':
    '<|channel|>commentary to=functions.get_current_time <|constrain|>json<|message|>{"timezone":"UTC"}<|call|>',
  gemma4: '<|tool_call>call:get_current_time{timezone:<|"|>UTC<|"|>}<tool_call|>',
  functiongemma:
    '<start_function_call>call:get_current_time{timezone:<escape>UTC<escape>}<end_function_call>',
  cohere:
    '<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_current_time", "parameters": {}}]<|END_ACTION|>',
  apertus: '<|tools_prefix|>[{"get_current_time": {"timezone": "UTC"}}]<|tools_suffix|>',
  dots: '<dots_function_call>\n<invoke name="get_current_time">\n</invoke>\n</dots_function_call>',
  gigachat: 'function call<|role_sep|>\n{"name": "get_current_time", "arguments": {"timezone": "UTC"}}',
  hunyuan: '<tool_calls>\n<tool_call>get_current_time<tool_sep>\n<arg_key>timezone</arg_key>',
  inkling:
    '<|message_model|>get_current_time<|content_invoke_tool_json|>{"name":"get_current_time","args":{}}<|end_message|>',
  internlm: '<|action_start|> <|plugin|>\n{"name": "get_current_time", "parameters": {}}<|action_end|>',
  minimax:
    '<minimax:tool_call>\n<invoke name="get_current_time">\n<parameter name="timezone">UTC</parameter>',
  seed_oss:
    '<seed:tool_call><function=get_current_time><parameter=timezone>UTC</parameter></function></seed:tool_call>',
  longcat: '<longcat_tool_call>{"name": "get_current_time", "arguments": {}}</longcat_tool_call>',
  lfm2: '<|tool_call_start|>[get_current_time(timezone="UTC")]<|tool_call_end|>',
  granite: '<|tool_call|>[{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]',
  jamba: '<tool_calls>[{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]</tool_calls>',
  phi4: 'functools[{"name": "get_current_time", "arguments": {"timezone": "UTC"}}]',
  olmo3: '<function_calls>get_current_time(timezone="UTC")</function_calls>',
  step3: '<steptml:invoke name="get_current_time"><steptml:parameter name="timezone">UTC</steptml:parameter>',
  minicpm: '<function name="get_current_time"><param name="timezone">UTC</param></function>',
  muse: '<atem:function_calls><atem:invoke name="get_current_time"></atem:invoke></atem:function_calls>',
  k2: '<ifm|tool_calls><ifm|tool_call>get_current_time',
  json: '{"name": "get_current_time", "arguments": {"timezone": "UTC"}}',
};

describe('tool-call markup families', () => {
  it.each(Object.keys(FAMILY_MARKUP) as MarkupFamily[])('%s: a leaked call is found', (family) => {
    const text = `It is noon. ${SAMPLES[family]}`;
    expect(FAMILY_MARKUP[family].test(SAMPLES[family])).toBe(true);
    expect(findMarkup(text)).toBeDefined();
  });

  it("no family matches the probes' own healthy answers or the large note", () => {
    for (const text of [
      'OK.',
      'It is 12:00 UTC.',
      'I cannot call tools here, but it is about noon in UTC.',
      '{"city": "Paris", "country": "France"}',
      '7748',
      'QX7-19AF',
      LARGE_NOTE,
      fillerText(2000),
    ]) {
      expect(findMarkup(text), text.slice(0, 40)).toBeUndefined();
    }
  });
});
