// Gateways in front of the engines. A gateway's own lines say what the engines' do not: that it has no worker left
// to send a request to, or that the worker it chose failed the request.
//  - sgl-model-gateway (`smg`, lightseekorg/smg, read at 73da68ca9472bbc0ff5f63d31a8a21fbb8696359, 2026-08-07;
//    formerly sgl-router in sgl-project/sglang): Rust `tracing` with file and line
//    (model_gateway/src/observability/logging.rs: `%Y-%m-%d %H:%M:%S`, or JSON with flatten_event: `message`).
//  - LiteLLM (BerriAI/litellm; over the fetch limit, read in the search index's copies of
//    litellm/proxy/common_request_processing.py, 2025 → 2026): `HH:MM:SS - LiteLLM Proxy:ERROR: file.py:N - …`.
//  - Envoy AI Gateway (envoyproxy/ai-gateway, read at c217da8a539570ba3f6014a60c2687c29a945f1f, 2026-08-21): the
//    upstream's failures are in Envoy's access log; `aigw run` writes it as text
//    (internal/autoconfig/config.yaml.tmpl: `[%START_TIME%] %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%
//    model=%REQ(X-AI-EG-MODEL)% %RESPONSE_CODE% llm_input_token=… llm_output_token=… llm_reasoning_token=…
//    %DURATION%ms`). The JSON access log of the Kubernetes examples has no message field: no rule reads it.
import type { RulePack } from './types.js';

const SMG = 'lightseekorg/smg model_gateway/src/routers/http/pd_router.rs @ 73da68ca';

export const gatewayPack: RulePack = {
  name: 'gateway',
  engineLines: [],
  rules: [
    // pd_router.rs:922 select_pd_pair: `Err(format!("No available {worker_type} workers (all circuits open or
    // unhealthy)"))` (and :913 `No {worker_type} workers available. Please check if …`), logged by :176
    // handle_server_selection_error `error!("Failed to select PD pair error={}", error)` for every request, which
    // gets a 503 `No available servers: …`. Every request of the deployment fails while it lasts: one incident.
    {
      name: 'gateway_smg_no_workers',
      severity: 'critical',
      class: 'no_workers',
      upstream: `${SMG}:176, :913, :922`,
      incident: 'no_workers',
      logger: 'tracing',
      match: String.raw`Failed to select PD pair error=No (?:available (?<role>\w{1,16}) workers \(all circuits open or unhealthy\)|(?<role2>\w{1,16}) workers available)`,
    },
    // model_gateway/src/routers/http/router.rs:508 (regular mode): `error::service_unavailable("no_workers", "No
    // available workers")` — its log line is the access log's 503; the worker's failing health checks before it:
    // model_gateway/src/worker/worker.rs:1482 `HTTP health check failed for {}: {err:?}` and :1473 `HTTP health check
    // returned non-success status for {}: {}` (a warning each; the circuit opens after the configured failures).
    {
      name: 'gateway_smg_health_check_failed',
      severity: 'warning',
      class: 'health_check_failed',
      upstream: 'lightseekorg/smg model_gateway/src/worker/worker.rs:1473, :1482 @ 73da68ca',
      logger: 'tracing',
      perRequest: 'worker',
      match: String.raw`HTTP health check (?:failed|returned non-success status) for (?<worker>\S{1,300}): `,
    },
    // pd_router.rs:687 `PD request transport error, both sides aborted: {e}` (the prefill or decode connection
    // failed mid-request) and :1010 `Stream error from decode server {}: {}`: one request failed at a worker.
    {
      name: 'gateway_smg_worker_error',
      severity: 'warning',
      class: 'transfer_failure',
      upstream: `${SMG}:687, :1010`,
      logger: 'tracing',
      match: String.raw`PD request transport error, both sides aborted: |Stream error from decode server (?<worker>\S{1,300}): `,
    },
    // LiteLLM litellm/proxy/common_request_processing.py _handle_llm_api_exception (index copies, 2025 → 2026):
    // `log_fn("litellm.proxy.proxy_server._handle_llm_api_exception(): Exception occured - %s", e)` (older an
    // f-string): the request failed; str(e) starts with LiteLLM's exception class. The upstream's failures
    // (connection refused or reset, 5xx, time-out) are a warning each; `No deployments available for selected model`
    // (every deployment of the model is cooling down after failures) fails every request of that model. The match
    // ends at the class name: what follows quotes the upstream's answer and the request's model (user text).
    {
      name: 'gateway_litellm_upstream_error',
      severity: 'warning',
      class: 'transfer_failure',
      upstream:
        'BerriAI/litellm litellm/proxy/common_request_processing.py _handle_llm_api_exception (index copies 2025 → 2026)',
      logger: 'litellm',
      match: String.raw`litellm\.proxy\.proxy_server\._handle_llm_api_exception\(\): Exception occured - litellm\.(?<exception>APIConnectionError|ServiceUnavailableError|InternalServerError|Timeout|BadGatewayError|APIError): `,
    },
    {
      name: 'gateway_litellm_no_deployments',
      severity: 'warning',
      class: 'no_workers',
      upstream:
        'BerriAI/litellm litellm/proxy/common_request_processing.py _handle_llm_api_exception, litellm/router.py (index copies)',
      logger: 'litellm',
      match: String.raw`litellm\.proxy\.proxy_server\._handle_llm_api_exception\(\): Exception occured - No deployments available for selected model`,
    },
    // Envoy AI Gateway's text access log (above): a 502, 503 or 504 is the upstream engine failing the request
    // (connection refused or reset: 503 with Envoy's `upstream connect error`, no healthy upstream: 503, time-out:
    // 504). Anchored at both ends with no space inside a field: the model name (the request's) cannot shift the
    // fields, so a client cannot print a status of its own into the line.
    {
      name: 'gateway_envoy_upstream_5xx',
      severity: 'warning',
      class: 'transfer_failure',
      upstream:
        'envoyproxy/ai-gateway internal/autoconfig/config.yaml.tmpl access log text format @ c217da8a',
      match: String.raw`^\[(?<start>[^\]\s]{1,64})\] (?<path>/\S{0,300}) model=(?<model>\S{0,300}) (?<code>50[234]) llm_input_token=\S{0,32} llm_output_token=\S{0,32} llm_reasoning_token=\S{0,32} \d{1,12}ms\s*$`,
    },
  ],
};
