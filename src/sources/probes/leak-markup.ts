// Tool-call markup that belongs in `tool_calls` and leaked into `content` (or `reasoning_content`, or a tool
// call's own name or arguments): when the engine's tool parser fails (wrong --tool-call-parser, a template
// change, a streaming bug) the model's raw markup comes back as text with HTTP 200 (e.g. sglang #35736). One
// entry per markup family, from the parsers upstream: SGLang python/sglang/srt/function_call/*_detector.py
// (ToolCallParserEnum in function_call_parser.py @00828e5 lists them) and vLLM vllm/tool_parsers/*_tool_parser.py
// (_TOOL_PARSERS_TO_REGISTER in vllm/tool_parsers/__init__.py @0064cc9). Several parsers share a family's markup
// (README "Tool-call markup families" lists every parser with its family, markers and file).
//
// Two shapes are found: a whole call (the family's opening marker with what follows it: a lone opening tag is
// not enough where it is also plausible prose), and a tag out of place — a closing tag or a special token that
// is never prose (`</tool_call>`, `<tool_call|>`, `<|END_ACTION|>`), or tags that do not balance. The probes'
// own prompts never ask for markup, so any of it in an answer is the parser's.

export type MarkupFamily =
  | 'deepseek'
  | 'hermes'
  | 'llama'
  | 'pythonic'
  | 'mistral'
  | 'kimi'
  | 'glm'
  | 'gpt-oss'
  | 'gemma4'
  | 'functiongemma'
  | 'cohere'
  | 'apertus'
  | 'dots'
  | 'gigachat'
  | 'hunyuan'
  | 'inkling'
  | 'internlm'
  | 'minimax'
  | 'seed_oss'
  | 'longcat'
  | 'lfm2'
  | 'granite'
  | 'jamba'
  | 'phi4'
  | 'olmo3'
  | 'step3'
  | 'minicpm'
  | 'muse'
  | 'k2'
  | 'json';

const SEP = '[｜|‖]{1,2}';

/** A whole call in a family's markup. */
export const FAMILY_MARKUP: Record<MarkupFamily, RegExp> = {
  // deepseekv3_detector.py / deepseekv31_detector.py: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>…<｜tool▁sep｜>;
  // deepseekv32_detector.py / deepseekv4_detector.py: DSML blocks <｜DSML｜function_calls> / <｜DSML｜tool_calls>.
  // The ASCII `|`, doubled `｜｜` and `‖` variants are what clients have seen after detokenizer mishaps.
  deepseek: new RegExp(
    [
      `${SEP}\\s*DSML\\s*${SEP}`,
      `<${SEP}tool[▁_]calls?[▁_](?:begin|end)${SEP}>`,
      `<${SEP}tool[▁_]sep${SEP}>`,
    ].join('|'),
  ),
  // hermes_detector.py / qwen25_detector.py (vLLM hermes_tool_parser.py, ernie45_tool_parser.py):
  // <tool_call>\n{"name": …, "arguments": …}\n</tool_call>; qwen3_coder_detector.py (vLLM qwen3coder / qwen3xml /
  // step3p5 / mimo): <tool_call>\n<function=NAME>\n<parameter=K>…
  hermes: /<tool_call>\s*(?:\{\s*"|<function=)/,
  // llama32_detector.py (vLLM llama_tool_parser.py): <|python_tag|>{"name": …, "parameters": …};
  // Llama 4 pythonic (vLLM llama4_pythonic_tool_parser.py): <|python_start|>[f(…)]<|python_end|>
  llama: /<\|python_(?:tag|start)\|>/,
  // pythonic_detector.py (vLLM pythonic_tool_parser.py): a bare Python list of calls, [get_weather(city="Paris")]
  pythonic: /(?:^|\s)\[\s*[A-Za-z_][\w.]*\(\s*[A-Za-z_]\w*\s*=/,
  // mistral_detector.py (vLLM mistral_tool_parser.py): [TOOL_CALLS] [{"name": …}] (and [TOOL_CALLS]name[ARGS]{…})
  mistral: /\[TOOL_CALLS\]|\[ARGS\]\s*\{/,
  // kimik2_detector.py (vLLM kimi_k2_tool_parser.py):
  // <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>…;
  // kimik3_detector.py (vLLM kimi_k3_tool_parser.py), XTML: <|open|>tools<|sep|><|open|>call tool="NAME" …<|close|>call<|sep|>
  kimi: /<\|tool_calls?_(?:section_begin|begin|argument_begin)\|>|<\|(?:open|close)\|>(?:tools|call|argument)\b/,
  // glm4_moe_detector.py / glm47_moe_detector.py (vLLM glm4_moe / glm47_moe_tool_parser.py):
  // <tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>
  glm: /<arg_key>[\s\S]*?<\/arg_key>|<tool_call>[\w.-]+\s*<arg_key>/,
  // gpt_oss_detector.py (harmony; vLLM gptoss_tool_parser.py, parser `openai`):
  // <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>
  'gpt-oss': /<\|channel\|>|<\|call\|>|<\|constrain\|>/,
  // gemma4_detector.py (vLLM gemma4_tool_parser.py, gemma4_engine_tool_parser.py): TOOL_CALL_START "<|tool_call>",
  // TOOL_CALL_END "<tool_call|>", strings between <|"|>: <|tool_call>call:NAME{key:<|"|>v<|"|>}<tool_call|>
  gemma4: /<\|tool_call>|<tool_call\|>|<\|"\|>/,
  // vLLM functiongemma_tool_parser.py: <start_function_call>call:NAME{k:<escape>v<escape>}<end_function_call>
  functiongemma: /<(?:start|end)_function_call>/,
  // cohere_command4_detector.py (vLLM cohere_command_tool_parser.py): <|START_ACTION|>[{"tool_name": …}]<|END_ACTION|>
  cohere: /<\|(?:START|END)_ACTION\|>/,
  // apertus2509_detector.py (vLLM apertus_tool_parser.py): <|tools_prefix|>[{"NAME": {…}}]<|tools_suffix|>
  apertus: /<\|tools_(?:prefix|suffix)\|>/,
  // dots_detector.py (vLLM dots_tool_parser.py): <dots_function_call><invoke name="…"><parameter name="…">
  dots: /<\/?dots_function_call>/,
  // gigachat3_detector.py / gigachat35_detector.py (vLLM gigachat3_tool_parser.py):
  // "function call<|role_sep|>\n{…}" or "<|function_call|>{…}"
  gigachat: /function call<\|role_sep\|>|<\|function_call\|>/,
  // hunyuan_detector.py (vLLM hy_v3_tool_parser.py; the shipping tokenizer suffixes them, <tool_calls:opensource>):
  // <tool_calls><tool_call>NAME<tool_sep><arg_key>K</arg_key><arg_value>V</arg_value></tool_call></tool_calls>
  hunyuan: /<tool_sep(?::[^>]+)?>|<tool_calls(?::[^>]+)?>\s*<tool_call/,
  // inkling_detector.py (vLLM inkling_tool_parser.py):
  // <|message_model|>NAME<|content_invoke_tool_json|>{"name": …, "args": {…}}<|end_message|>
  inkling: /<\|content_invoke_tool_json\|>/,
  // internlm_detector.py (parser interns1; vLLM internlm2_tool_parser.py): <|action_start|> <|plugin|>\n{…}<|action_end|>
  internlm: /<\|action_start\|>|<\|plugin\|>/,
  // minimax_m2.py (vLLM minimax_m2_tool_parser.py): <minimax:tool_call><invoke name="…"><parameter name="…">;
  // minimax_m3.py (vLLM minimax_m3_tool_parser.py): the namespace token ]<]minimax[>[ before each tag;
  // vLLM minimax_tool_parser.py (MiniMax-M1): <tool_calls>\n{"name": …, "arguments": …}\n</tool_calls>
  minimax: /<\/?minimax:tool_call>|\]<\]minimax\[>\[|<tool_calls>\s*\{\s*"/,
  // vLLM seed_oss_tool_parser.py: <seed:tool_call><function=NAME><parameter=K>V</parameter></function></seed:tool_call>
  seed_oss: /<\/?seed:tool_call>/,
  // vLLM longcat_tool_parser.py (Hermes with its own tags): <longcat_tool_call>{…}</longcat_tool_call>
  longcat: /<\/?longcat_tool_call>|<longcat_arg_key>/,
  // lfm2_detector.py (vLLM lfm2_tool_parser.py): <|tool_call_start|>[NAME(k="v")]<|tool_call_end|>
  lfm2: /<\|tool_call_(?:start|end)\|>|<\|tool_list_(?:start|end)\|>/,
  // vLLM granite_tool_parser.py: <|tool_call|>[{"name": …, "arguments": …}] (or <tool_call>[…]);
  // granite_20b_fc_tool_parser.py: <function_call> {"name": …, "arguments": …}
  granite: /<\|tool_call\|>|<function_call>\s*\{/,
  // vLLM jamba_tool_parser.py: <tool_calls>[{"name": …, "arguments": …}]</tool_calls>
  jamba: /<tool_calls>\s*\[/,
  // vLLM phi4mini_tool_parser.py: functools[{"name": …, "arguments": …}]
  phi4: /functools\s*\[/,
  // vLLM olmo3_tool_parser.py (pythonic inside a block): <function_calls>NAME(k="v")</function_calls>
  olmo3: /<\/?function_calls>/,
  // step3_detector.py (vLLM step3_tool_parser.py): <｜tool_calls_begin｜>… <steptml:invoke name="…">
  step3: /<\/?steptml:(?:invoke|parameter)/,
  // minicpm5_detector.py (vLLM minicpm5xml_tool_parser.py): <function name="NAME"><param name="K">V</param></function>
  minicpm: /<function name="[^"\n]{1,128}">\s*<param name=/,
  // muse_glimmer_detector.py (vLLM muse_glimmer_tool_parser.py), ATEM: <atem:function_calls><atem:invoke name="…">
  muse: /<\/?atem:(?:function_calls|invoke|parameter)\b/,
  // k2_v3_detector.py (parser k2_horizon; vLLM k2_horizon_tool_parser.py): <ifm|tool_calls> / <ifm|tool_call> blocks
  k2: /<\/?ifm\|tool_calls?>/,
  // A bare JSON call in the text (vLLM xlam_tool_parser.py, phi4/llama JSON without their tags, json_detector.py):
  // a model that wrote the call and a server that never parsed it.
  json: /\{\s*"name"\s*:\s*"[^"\n]{1,128}"\s*,\s*"(?:arguments|parameters)"\s*:|\{\s*"(?:arguments|parameters)"\s*:\s*\{[^\n]*\}\s*,\s*"name"\s*:/,
};

/**
 * Tags that come in pairs: a closing one is never prose, and an opening one with no closing one (or the reverse)
 * is a call cut in two — the parser let part of it through. From the same files as FAMILY_MARKUP.
 */
export const PAIRED_TAGS: readonly { family: MarkupFamily; open: string; close: string }[] = [
  { family: 'hermes', open: '<tool_call>', close: '</tool_call>' },
  { family: 'gemma4', open: '<|tool_call>', close: '<tool_call|>' },
  { family: 'kimi', open: '<|tool_calls_section_begin|>', close: '<|tool_calls_section_end|>' },
  { family: 'kimi', open: '<|tool_call_begin|>', close: '<|tool_call_end|>' },
  { family: 'deepseek', open: '<｜tool▁calls▁begin｜>', close: '<｜tool▁calls▁end｜>' },
  { family: 'deepseek', open: '<｜tool▁call▁begin｜>', close: '<｜tool▁call▁end｜>' },
  { family: 'glm', open: '<arg_value>', close: '</arg_value>' },
  { family: 'cohere', open: '<|START_ACTION|>', close: '<|END_ACTION|>' },
  { family: 'apertus', open: '<|tools_prefix|>', close: '<|tools_suffix|>' },
  { family: 'internlm', open: '<|action_start|>', close: '<|action_end|>' },
  { family: 'lfm2', open: '<|tool_call_start|>', close: '<|tool_call_end|>' },
  { family: 'llama', open: '<|python_start|>', close: '<|python_end|>' },
  { family: 'functiongemma', open: '<start_function_call>', close: '<end_function_call>' },
  { family: 'minimax', open: '<minimax:tool_call>', close: '</minimax:tool_call>' },
  { family: 'seed_oss', open: '<seed:tool_call>', close: '</seed:tool_call>' },
  { family: 'longcat', open: '<longcat_tool_call>', close: '</longcat_tool_call>' },
  { family: 'dots', open: '<dots_function_call>', close: '</dots_function_call>' },
  { family: 'jamba', open: '<tool_calls>', close: '</tool_calls>' },
  { family: 'olmo3', open: '<function_calls>', close: '</function_calls>' },
  { family: 'muse', open: '<atem:function_calls>', close: '</atem:function_calls>' },
];

export type MarkupShape = 'call' | 'orphan' | 'unbalanced';

export interface MarkupHit {
  family: MarkupFamily;
  /** A whole call, a closing tag with no opening one, or an opening one never closed. */
  shape: MarkupShape;
  text: string;
}

const count = (text: string, tag: string) => {
  let n = 0;
  for (let i = text.indexOf(tag); i !== -1; i = text.indexOf(tag, i + tag.length)) n++;
  return n;
};

/** A tag that does not pair up, when one does not (the first in the text). */
function unpaired(text: string): (MarkupHit & { at: number }) | undefined {
  let best: (MarkupHit & { at: number }) | undefined;
  for (const { family, open, close } of PAIRED_TAGS) {
    const opens = count(text, open);
    const closes = count(text, close);
    if (opens === closes) continue;
    // An opening tag in angle brackets alone can be prose ("use the <tool_call> tag"): it counts when nothing
    // follows it, the call cut at the end of the text. Special tokens (<|…|>, <｜…｜>) are never prose.
    const special = /^<[|｜]/.test(open) || /[|｜]>$/.test(open);
    if (opens > closes && !special && text.slice(text.lastIndexOf(open) + open.length).trim() !== '')
      continue;
    const shape: MarkupShape = closes > opens ? 'orphan' : 'unbalanced';
    const tag = closes > opens ? close : open;
    const at = text.indexOf(tag);
    if (best === undefined || at < best.at) best = { family, shape, text: tag, at };
  }
  return best;
}

/** The first markup in `text`: a whole call of a family, else a tag out of place. */
export function findMarkup(text: string): MarkupHit | undefined {
  let best: (MarkupHit & { at: number }) | undefined;
  for (const [family, re] of Object.entries(FAMILY_MARKUP) as [MarkupFamily, RegExp][]) {
    const m = re.exec(text);
    if (m && (best === undefined || m.index < best.at))
      best = { family, shape: 'call', text: m[0].slice(0, 80), at: m.index };
  }
  const tag = best === undefined ? unpaired(text) : undefined;
  const hit = best ?? tag;
  return hit && { family: hit.family, shape: hit.shape, text: hit.text };
}
