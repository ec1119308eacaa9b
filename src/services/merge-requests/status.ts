// detailed_merge_status with GitLab's precedence (reference §5.3), computed from stored fields only
// so lists never touch git.
import { noteTimeFlip } from '../../http/kept-response.js';
import type { ProjectRow } from '../projects/lookup.js';
import type { MrRow, PipelineRow } from './rows.js';

export const ACTIVE_PIPELINE_STATUSES = ['created', 'waiting_for_resource', 'preparing', 'pending', 'running', 'scheduled', 'manual'];

export type CiVerdict = 'ok' | 'ci_still_running' | 'ci_must_pass';

/** The CI check: only when the project requires a successful pipeline. */
export function ciVerdict(project: ProjectRow, pipeline: PipelineRow | undefined): CiVerdict {
  if (!project.only_allow_merge_if_pipeline_succeeds) return 'ok';
  if (!pipeline) return 'ci_must_pass';
  if (pipeline.status === 'success') return 'ok';
  if (pipeline.status === 'skipped' && project.allow_merge_on_skipped_pipeline) return 'ok';
  if (ACTIVE_PIPELINE_STATUSES.includes(pipeline.status)) return 'ci_still_running';
  return 'ci_must_pass';
}

export interface StatusInputs {
  project: ProjectRow;
  pipeline: PipelineRow | undefined;
  blocked: boolean;
  now?: number;
}

/** First failing check before CI, or null when every non-CI check passes. */
export function firstFailingCheck(mr: MrRow, inp: StatusInputs): string | null {
  if (mr.state !== 'opened') return 'not_open';
  if (mr.merge_after) {
    const after = Date.parse(mr.merge_after);
    if (after > (inp.now ?? Date.now())) {
      // Kept responses showing this status must end when it no longer holds.
      noteTimeFlip(after);
      return 'merge_time';
    }
  }
  if (mr.draft) return 'draft_status';
  if (mr.source_missing || mr.commits_count === 0) return 'commits_status';
  if (!discussionsResolved(mr, inp.project)) return 'discussions_not_resolved';
  if (inp.blocked) return 'merge_request_blocked';
  if (mr.merge_status === 'cannot_be_merged') return 'conflict';
  if (inp.project.merge_method !== 'merge' && !mr.ff_possible) return 'need_rebase';
  return null;
}

/**
 * GitLab's mergeable_discussions_state? (`blocking_discussions_resolved`): true unless the project
 * requires every thread resolved and a note of one is not.
 */
export function discussionsResolved(mr: MrRow, project: ProjectRow): boolean {
  return !project.only_allow_merge_if_all_discussions_are_resolved || mr.unresolved_notes_count === 0;
}

export function detailedMergeStatus(mr: MrRow, inp: StatusInputs): string {
  if (mr.state === 'opened' && mr.prepared_at === null) return 'preparing';
  if (mr.merge_status === 'checking') return 'checking';
  if (mr.merge_status === 'unchecked' || mr.merge_status === 'cannot_be_merged_recheck') return 'unchecked';
  const failing = firstFailingCheck(mr, inp);
  if (failing) return failing;
  const ci = ciVerdict(inp.project, inp.pipeline);
  return ci === 'ok' ? 'mergeable' : ci;
}

/** `squash_on_merge`: the project's Require / Do-not-allow settings win over the request's flag. */
export function squashOnMerge(project: ProjectRow, squash: boolean): boolean {
  if (project.squash_option === 'always') return true;
  if (project.squash_option === 'never') return false;
  return squash;
}

const DRAFT_RE = /^\s*(\[draft\]|\(draft\)|draft:)\s*/i;

export function isDraftTitle(title: string): boolean {
  return DRAFT_RE.test(title);
}

export function stripDraft(title: string): string {
  let t = title;
  while (DRAFT_RE.test(t)) t = t.replace(DRAFT_RE, '').trimStart();
  return t;
}
