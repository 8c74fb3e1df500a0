// The contract of the verdict's candidate families (issue 26): the verdict first reads what the memory shows (the
// symptoms, ./symptoms.ts) and from them the state (./state.ts); then every family offers the diagnoses its evidence
// proves, and the strongest that fits the state names it (./candidate.ts). One file per family, one registry entry
// (./index.ts) each.
import type { Diagnosis, EvidenceKind, TargetStateName } from '../vocabulary.js';
import type { ClassifierConfig, InflightRun, SlotMemory, TargetMemory, WarningMemory } from '../memory.js';

/** A diagnosis the memory proves, and what it is worth. */
export interface Candidate {
  diagnosis: Diagnosis;
  /** The kind of evidence its DIAGNOSES row names (EVIDENCE, strongest first). */
  evidence: EvidenceKind;
  /** How specific it is among its kind: a signature's critical line rank (diagnosisRank), else its row's rank. */
  rank: number;
  /** The states it can name now: a subset of its row's states. */
  fits: readonly TargetStateName[];
  cause: string;
  /**
   * Kinds of evidence this one explains: while it fits, candidates of those kinds are its consequences, not
   * causes (the leg of a half-failed pair that waits for its gone peer stalls, and its transfers fail).
   */
  explains?: readonly EvidenceKind[];
}

/** A completion run still in flight, and what its age already proves. */
export interface Hang {
  run: InflightRun;
  ageMs: number;
  /** In flight confirmAfter past a critical line (or its own start, if later): a failure now. */
  afterCritical: boolean;
  /** In flight hangAfter: hung, whatever the logs say. */
  hung: boolean;
  /** In flight past the probe's TTFT objective: its first token is late already. */
  late: boolean;
}

/** What the memory shows, read once per verdict: the probes, health and ports, and the engines' own state. */
export interface Symptoms {
  hangs: Hang[];
  /** Every slot with a result, runs in flight counted in (a hang fails its slot before its timeout fires). */
  slots: SlotMemory[];
  completion: SlotMemory[];
  /** Completion slots whose last run passed. */
  passing: SlotMemory[];
  /** Completion slots `wedgeAfter` failures in a row into a streak. */
  failing: SlotMemory[];
  /** Completions fail on every slot, or one hung with nothing finished since: the deployment serves nothing. */
  stuck: boolean;
  /** The newest completion in flight hangAfter with nothing finished since it started, as a cause. */
  hungText?: string;
  /** A health slot failing downAfter times that no pass behind its hop explains away. */
  health?: SlotMemory;
  /** That health endpoint answers (503, or not in time while something else from the server answered): a live server. */
  alive: boolean;
  /**
   * The failing health check timed out on an accepted connection and nothing else from the server answered since
   * (no probe got response headers, no metrics scrape passed): a frozen process (SIGSTOP) whose kernel still
   * accepts connections. Neither alive nor refused: completions decide the state, and no text says it answers.
   */
  silent: boolean;
  /** Health on a live server fails while no completion passes and completions fail (SGLang health_generate). */
  healthGenerate: boolean;
  /** A health slot failing while completions pass (behind its hop, or anywhere). */
  healthFailed?: SlotMemory;
  /** A port refusing downAfter times that no pass behind its hop explains away. */
  refused?: SlotMemory;
  /** Whether a completion passes through a hop behind `hop`. */
  behindPasses: (hop: string) => boolean;
  /** A confirmed critical line the completions have not all passed since. */
  confirmedHolds: boolean;
  /** Failures that come and go over a window of runs (./pattern.ts); wedged when most runs fail everywhere. */
  flaky?: { wedged: boolean; text: string };
  /** The most recent naming warning of the incident. */
  warned?: WarningMemory;
  /** An engine stalled: running or queued with no progress for stallAfter. */
  stalled: boolean;
  /** The router holds requests while every engine behind it runs and queues nothing (./router.ts), as a cause. */
  stuckRouter?: string;
  /** A router holds requests for a PD pair with one leg down (./router.ts), as a cause. */
  pair?: string;
  /** Our completions wait on an engine that makes tokens with requests waiting (./candidates/saturation.ts). */
  saturated?: string;
  /**
   * An engine that would explain our waits as load (./candidates/saturation.ts) beside another of the target that holds
   * work with no progress of its own (`service`): the load explains nothing, the wedge rules decide, and `text` names
   * both (a saturated decode beside a prefill whose bootstrap thread died; two replicas, one frozen); `load` is the
   * loaded engine's part alone.
   */
  besideLoad?: { service: string; load: string; text: string };
  /**
   * The wedge as a symptom, for the causes of what names it: the half-failed pair, a hang, failures on every slot,
   * or intermittence everywhere (the first that holds).
   */
  wedgeText?: string;
  /** The degradation as a symptom: a failing slot, else intermittence. */
  degradedText?: string;
}

/** One family of candidates: the diagnoses its evidence proves on this memory (none, one, or a few). */
export type Family = (
  s: TargetMemory,
  now: number,
  cfg: ClassifierConfig,
  sym: Symptoms,
) => readonly Candidate[];
