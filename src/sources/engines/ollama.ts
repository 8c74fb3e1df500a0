// Ollama has no Prometheus endpoint. GET /api/ps (ollama/ollama docs/api.md "List Running Models"; server/
// routes.go PsHandler) lists the loaded models — {"models": [{name, model, size, size_vram, expires_at, …}]}
// — and answers from the scheduler's state, so it stops answering when the server is stuck while GET /
// ("Ollama is running") still does. It carries no request counts: the mapping checks the shape and reports
// no load, so stalls are judged by the probes alone.
import type { EngineFields } from './mappings/index.js';

export class OllamaShapeError extends Error {}

export interface OllamaPs {
  fields: EngineFields;
  /** Names of the loaded models. */
  models: string[];
}

export function mapOllamaPs(body: unknown): OllamaPs {
  const models = (body as { models?: unknown } | null)?.models;
  if (body === null || typeof body !== 'object' || !Array.isArray(models)) {
    throw new OllamaShapeError('not an Ollama /api/ps answer: expected {"models": [...]}');
  }
  const names = models.flatMap((m: unknown) => {
    const n = (m as { name?: unknown } | null)?.name;
    return typeof n === 'string' ? [n] : [];
  });
  return { fields: {}, models: names };
}
