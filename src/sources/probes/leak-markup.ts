// Tool-call markup that belongs in `tool_calls` and leaked into `content`: when the engine's tool parser
// fails (wrong --tool-call-parser, a template change, a streaming bug) the model's raw markup comes back as
// text with HTTP 200 (e.g. sglang #35736). One pattern per model family, from the families'
// parsers upstream (SGLang python/sglang/srt/function_call/*_detector.py, the same tokens as vLLM's
// tool_parsers/). A lone opening tag is not enough where the tag is also plausible prose: the pattern needs
// what follows it.

export type MarkupFamily = 'deepseek' | 'hermes' | 'llama' | 'mistral' | 'kimi' | 'glm' | 'gpt-oss' | 'json';

const SEP = '[｜|‖]{1,2}';

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
  // hermes_detector.py / qwen25_detector.py: <tool_call>\n{"name": …, "arguments": …}\n</tool_call>;
  // qwen3_coder_detector.py: <tool_call>\n<function=NAME>\n<parameter=K>…
  hermes: /<tool_call>\s*(?:\{\s*"|<function=)/,
  // llama32_detector.py: <|python_tag|>{"name": …, "parameters": …}; Llama 4 pythonic: <|python_start|>[f(…)]
  llama: /<\|python_(?:tag|start)\|>/,
  // mistral_detector.py: [TOOL_CALLS] [{"name": …, "arguments": …}] (and [TOOL_CALLS]name[ARGS]{…} in v11)
  mistral: /\[TOOL_CALLS\]/,
  // kimik2_detector.py: <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>…
  kimi: /<\|tool_calls?_(?:section_begin|begin|argument_begin)\|>/,
  // glm4_moe_detector.py / glm47_moe_detector.py: <tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>
  glm: /<arg_key>[\s\S]*?<\/arg_key>|<tool_call>[\w.-]+\s*<arg_key>/,
  // gpt_oss_detector.py (harmony): <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>
  'gpt-oss': /<\|channel\|>|<\|call\|>|<\|constrain\|>/,
  // A bare JSON call in the text: a model that wrote the call and a server that never parsed it.
  json: /\{\s*"name"\s*:\s*"[^"\n]{1,128}"\s*,\s*"(?:arguments|parameters)"\s*:|\{\s*"(?:arguments|parameters)"\s*:\s*\{[^\n]*\}\s*,\s*"name"\s*:/,
};

export interface MarkupHit {
  family: MarkupFamily;
  text: string;
}

/** The first family whose markup appears in `text`, with the matched text. */
export function findMarkup(text: string): MarkupHit | undefined {
  let best: (MarkupHit & { at: number }) | undefined;
  for (const [family, re] of Object.entries(FAMILY_MARKUP) as [MarkupFamily, RegExp][]) {
    const m = re.exec(text);
    if (m && (best === undefined || m.index < best.at))
      best = { family, text: m[0].slice(0, 80), at: m.index };
  }
  return best && { family: best.family, text: best.text };
}
