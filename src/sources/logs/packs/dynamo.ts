// NVIDIA Dynamo's Rust frontend and runtime (ai-dynamo/dynamo; the repository is over the fetch limit, so the
// wordings were read in the search index's copies, several ages, no commit named by the index). Dynamo logs through
// `tracing` (text: `2026-08-10T14:00:01.153Z ERROR chat_completions: dynamo_llm::http::service::openai: …`, or JSON
// lines with DYN_LOGGING_JSONL whose message is `message`); its Python workers print the engines' own lines
// (vLLM, SGLang, TensorRT-LLM packs) in the same shape. A panic of the frontend is the rust pack's, with its
// message as the root cause.
import type { RulePack } from './types.js';

export const dynamoPack: RulePack = {
  name: 'dynamo',
  engineLines: [],
  rules: [
    // lib/runtime/src/pipeline/network/egress/push_router.rs PushRouter::round_robin / random / direct (every age in
    // the index): `anyhow!("no instances found for endpoint {}", …)` (older `{:?}` of the etcd root; the SDK era said
    // `no endpoints found for endpoint`), returned to the HTTP service, which logs it with the request
    // (`Internal server error: Failed to generate completions: no instances found for endpoint "…"`, quoted in
    // ai-dynamo/dynamo #1280 and #1540). No worker is registered for the model: every request fails. One request's
    // line after another is the same incident (`no_workers`), not an event each.
    {
      name: 'dynamo_no_instances',
      severity: 'critical',
      class: 'no_workers',
      upstream:
        'lib/runtime/src/pipeline/network/egress/push_router.rs PushRouter round_robin/random (index copies 2025 → 2026; #1280, #1540)',
      incident: 'no_workers',
      logger: 'tracing',
      match: String.raw`no (?:instances|endpoints) found for endpoint `,
    },
    // lib/llm/src/discovery/watcher.rs ModelWatcher (index copy, 2026): `tracing::info!(model_name, "removed model")`
    // when the last instance serving a model went away (its worker died or deregistered): the frontend stops
    // listing it and answers 404 for it until a worker registers again. A warning of the same class: the deaths
    // that removed it are the workers' own events.
    {
      name: 'dynamo_model_removed',
      severity: 'warning',
      class: 'no_workers',
      upstream: 'lib/llm/src/discovery/watcher.rs ModelWatcher handle_delete (index copy, 2026)',
      logger: 'tracing',
      match: String.raw`removed model(?: model_name=(?<model>\S{1,256}))?\s*$`,
    },
    // A worker left the discovery plane while request streams were still assigned to it (worker churn): ai-dynamo/
    // dynamo #13088 (2026-08, Dynamo 1.2.1) quotes the frontend's `No active endpoint found for removed stream
    // instance` beside the requests that then hung until their clients gave up (the runtime's instance-removal watcher,
    // PR #8182, cancels such streams for migration). Its source file was not read here: the wording is the report's.
    // A warning of the class that says the workers are going.
    {
      name: 'dynamo_removed_instance_streams',
      severity: 'warning',
      class: 'no_workers',
      upstream:
        'lib/runtime instance-removal watcher (PR #8182); wording quoted in ai-dynamo/dynamo #13088 (2026-08, Dynamo 1.2.1)',
      logger: 'tracing',
      match: String.raw`No active endpoint found for removed stream instance`,
    },
  ],
};
