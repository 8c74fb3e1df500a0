// SGLang scheduler, tokenizer and HTTP-process signatures (engine-signals.md §1.1, §1.5–§1.8, §2).
// SGLang prints no level name and the level of some lines changed between versions, so rules key on text.
import type { RulePack } from './types.js';

const KV_ABORT = String.raw`Aborted by AbortReq\.`;
const KV_TIMEOUT = String.raw`timed out after (?<seconds>[\d.]+)s in KVPoll\.(?<state>\w+)`;
const OTHER = String.raw`(?!.*(?:Aborted by AbortReq\.|timed out after [\d.]+s in KVPoll\.))`;

export const sglangPack: RulePack = {
  name: 'sglang',
  engineLines: ['sglang_batch'],
  rules: [
    // Per-request PD failures; the reason suffix decides the rule so the rule label stays bounded.
    {
      name: 'sglang_prefill_bootstrap_aborted',
      class: 'abort',
      severity: 'warning',
      match: String.raw`Prefill bootstrap failed for request rank=(?<rank>\d+).*${KV_ABORT}`,
    },
    {
      name: 'sglang_prefill_bootstrap_timeout',
      class: 'transfer_timeout',
      severity: 'warning',
      match: String.raw`Prefill bootstrap failed for request rank=(?<rank>\d+).*${KV_TIMEOUT}`,
    },
    {
      name: 'sglang_prefill_bootstrap_failed',
      class: 'transfer_failure',
      severity: 'warning',
      match: String.raw`Prefill bootstrap failed for request rank=(?<rank>\d+)${OTHER}`,
    },
    {
      name: 'sglang_decode_transfer_aborted',
      class: 'abort',
      severity: 'warning',
      match: String.raw`Decode transfer failed for request rank=(?<rank>\d+).*${KV_ABORT}`,
    },
    {
      name: 'sglang_decode_transfer_timeout',
      class: 'transfer_timeout',
      severity: 'warning',
      match: String.raw`Decode transfer failed for request rank=(?<rank>\d+).*${KV_TIMEOUT}`,
    },
    {
      name: 'sglang_decode_transfer_failed',
      class: 'transfer_failure',
      severity: 'warning',
      match: String.raw`Decode transfer failed for request rank=(?<rank>\d+)${OTHER}`,
    },
    {
      name: 'sglang_prefill_transfer_failed',
      class: 'transfer_failure',
      severity: 'warning',
      match: String.raw`Prefill transfer failed for request rank=(?<rank>\d+)`,
    },
    // warning_once: printed once per process, so one line means the timeout has started to bite.
    {
      name: 'sglang_bootstrap_timeout_warning',
      class: 'transfer_timeout',
      severity: 'warning',
      match: String.raw`Some requests timed out when bootstrapping`,
    },
    {
      name: 'sglang_waiting_timeout_warning',
      class: 'transfer_timeout',
      severity: 'warning',
      match: String.raw`Some requests fail to receive KV Cache transfer done signal after bootstrapping`,
    },
    // New: `Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)`; old: `(watchdog_timeout=300)`.
    {
      name: 'sglang_watchdog_timeout',
      class: 'watchdog_timeout',
      severity: 'critical',
      match: String.raw`(?<component>\w+) watchdog timeout \((?:self\.)?watchdog_timeout=(?<timeout>[\d.]+)`,
    },
    {
      name: 'sglang_sigquit_from_child',
      class: 'engine_death',
      severity: 'critical',
      match: String.raw`Received sigquit from a child process`,
    },
    {
      name: 'sglang_scheduler_exception',
      class: 'engine_death',
      severity: 'critical',
      match: String.raw`Scheduler hit an exception:`,
    },
    {
      name: 'sglang_health_check_failed',
      class: 'health_check_failed',
      severity: 'warning',
      match: String.raw`Health check failed\. Server couldn't get a response from detokenizer for last (?<seconds>\d+) seconds`,
    },
    // The parser failed and returned the raw tool-call markup as content (engine-signals.md §6).
    {
      name: 'sglang_tool_call_parse_error',
      class: 'tool_call_parse_error',
      severity: 'warning',
      match: String.raw`Error in detect_and_parse: |Error in parse_streaming_increment: |Tool call parsing error: `,
    },
    // PyTorch ProcessGroupNCCL: `[Rank N] Watchdog caught …`; newer torch: `[PG ID 0 PG GUID 0(default_pg) Rank N] …`.
    {
      name: 'sglang_nccl_watchdog_timeout',
      class: 'watchdog_timeout',
      severity: 'critical',
      match: String.raw`Rank (?<rank>\d+)\] Watchdog caught collective operation timeout`,
    },
    // Startup marker for DeepSeek-V4 KV pool sizing; `DSv4` in older builds, `DSV4` in newer.
    {
      name: 'sglang_bytes_per_full_token',
      class: 'startup_info',
      severity: 'info',
      match: String.raw`DS[vV]4 memory calculation: bytes_per_full_token=(?<bytes>[\d.]+)`,
      extract: { bytes: 'bytesPerFullToken' },
    },
  ],
};
