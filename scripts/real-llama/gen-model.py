#!/usr/bin/env python3
# A random-weight llama GGUF for the real-engine lane (issue 38): upstream llama-server needs a model file, this
# machine has no network but the package registries and no model weights, and a random model exercises every code
# path a probe touches (tokenizer, chat template, sampling, grammar, slots) at ~300 tokens/s on one CPU stream.
#
# Usage: gen-model.py LLAMA_CPP_SRC OUT.gguf [--seed N]
#   The vocabulary (tokens, merges, types, the byte-level "qwen2" pre-tokenizer) is the source's own vocab-only GGUF
#   (models/ggml-vocab-qwen2.gguf); the chat template is the source's Qwen2.5-7B-Instruct one
#   (models/templates/Qwen-Qwen2.5-7B-Instruct.jinja: the model examples/llamacpp.yaml serves, with tool calls under
#   --jinja). Written with the source's vendored gguf-py, so the format is the one this llama.cpp reads.
#
# Tokens biased away. A byte-level BPE vocabulary holds tokens that are a fragment of a UTF-8 sequence; a random
# model emits them, the server's JSON encoder throws on the invalid UTF-8 and every chat request gets a 500. Special
# and control tokens (EOS among them) are biased away too, so a generation always runs to max_tokens: "busy" then
# means tokens flowing, never an early stop. The bias: residual dimension 0 is a constant 1 in every token's
# embedding and no layer writes to it (row 0 of attn_output and ffn_down is zero), so after the final RMS norm it
# is positive for every position; output.weight's column 0 is -BIAS for the unwanted tokens and 0 for the others.
import sys
from pathlib import Path

import numpy as np


def main() -> None:
    if len(sys.argv) < 3:
        print("usage: gen-model.py LLAMA_CPP_SRC OUT.gguf [--seed N]", file=sys.stderr)
        sys.exit(2)
    src = Path(sys.argv[1])
    out = Path(sys.argv[2])
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 38
    sys.path.insert(0, str(src / "gguf-py"))
    import gguf  # noqa: E402  (the vendored copy, after the path is set)

    vocab = gguf.GGUFReader(str(src / "models" / "ggml-vocab-qwen2.gguf"))

    def field(name):
        return vocab.fields[name].contents()

    tokens = field("tokenizer.ggml.tokens")
    types = field("tokenizer.ggml.token_type")
    merges = field("tokenizer.ggml.merges")
    template = (src / "models" / "templates" / "Qwen-Qwen2.5-7B-Instruct.jinja").read_text()
    n_vocab = len(tokens)

    # Shape: ~60 M parameters, nearly all in the two vocabulary matrices; 4 small layers keep it fast on a CPU.
    n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx_train = 192, 4, 3, 1, 512, 8192
    head_dim = n_embd // n_head

    # GPT-2's byte-to-unicode table: how a byte-level BPE token string maps back to bytes.
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    to_byte = {chr(c): b for b, c in zip(bs, cs)}

    def unwanted(i: int) -> bool:
        if types[i] != gguf.TokenType.NORMAL:
            return True  # control, user-defined (<tool_call>, <|im_end|>…), unused
        try:
            bytes(to_byte[ch] for ch in tokens[i]).decode("utf-8")
        except (KeyError, UnicodeDecodeError):
            return True
        return False

    bad = np.array([unwanted(i) for i in range(n_vocab)])

    rng = np.random.default_rng(seed)

    def rand(*shape, scale=0.02):
        return (rng.standard_normal(shape, dtype=np.float32) * scale).astype(np.float16)

    w = gguf.GGUFWriter(str(out), "llama")
    w.add_name("wedgewatch-random-qwen2vocab")
    w.add_context_length(n_ctx_train)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(1_000_000.0)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_vocab_size(n_vocab)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16)
    w.add_tokenizer_model(field("tokenizer.ggml.model"))
    w.add_tokenizer_pre(field("tokenizer.ggml.pre"))
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(151643)  # <|endoftext|>
    w.add_eos_token_id(151645)  # <|im_end|>, Qwen2.5-Instruct's end of turn
    w.add_pad_token_id(151643)
    w.add_add_bos_token(False)
    w.add_chat_template(template)

    embd = rand(n_vocab, n_embd, scale=0.05)
    embd[:, 0] = 1.0
    w.add_tensor("token_embd.weight", embd)
    for i in range(n_layer):
        p = f"blk.{i}"
        w.add_tensor(f"{p}.attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        w.add_tensor(f"{p}.attn_q.weight", rand(n_head * head_dim, n_embd, scale=0.1))
        w.add_tensor(f"{p}.attn_k.weight", rand(n_head_kv * head_dim, n_embd, scale=0.1))
        w.add_tensor(f"{p}.attn_v.weight", rand(n_head_kv * head_dim, n_embd, scale=0.1))
        wo = rand(n_embd, n_head * head_dim, scale=0.05)
        wo[0, :] = 0
        w.add_tensor(f"{p}.attn_output.weight", wo)
        w.add_tensor(f"{p}.ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        w.add_tensor(f"{p}.ffn_gate.weight", rand(n_ff, n_embd, scale=0.1))
        w.add_tensor(f"{p}.ffn_up.weight", rand(n_ff, n_embd, scale=0.1))
        down = rand(n_embd, n_ff, scale=0.05)
        down[0, :] = 0
        w.add_tensor(f"{p}.ffn_down.weight", down)
    w.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    head = rand(n_vocab, n_embd, scale=0.1)
    head[:, 0] = np.where(bad, -20.0, 0.0).astype(np.float16)
    w.add_tensor("output.weight", head)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    params = 2 * n_vocab * n_embd + n_layer * (
        2 * n_embd + n_embd * n_head * head_dim * 2 + 2 * n_embd * n_head_kv * head_dim + 3 * n_embd * n_ff
    )
    print(f"{out}: {params / 1e6:.1f} M parameters, {out.stat().st_size / 1e6:.0f} MB, {int(bad.sum())} tokens biased away")


if __name__ == "__main__":
    main()
