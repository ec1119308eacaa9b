// Merge requests and what hangs off them (entities/merge-request.ts, entities/pipeline.ts,
// merge-requests/*.ts), labels, milestones, pipelines, commit statuses and deployments.
import { Type } from '@sinclair/typebox';
import { Arr, Bool, Int, NBool, NInt, NStr, Num, Str, Any, nullable, obj, oneOfStrings, optional, Time, NTime, NDay } from './common.js';
import { UserBasic, userBasicProps } from './users.js';

/** GET/POST/PUT …/labels (labels/routes.ts). */
export const Label = obj(
  {
    id: Int(),
    name: Str(),
    description: NStr(),
    description_html: Str(),
    text_color: Str(),
    color: Str(),
    archived: Bool(),
    subscribed: Bool(),
    priority: NInt(),
    is_project_label: Bool(),
  },
  { title: 'Label' },
);

/** Labels of a merge request with with_labels_details=true. */
export const LabelDetails = obj(
  { id: Int(), name: Str(), color: Str(), text_color: Str(), description: NStr(), description_html: Str(), archived: Bool() },
  { title: 'LabelDetails' },
);

/** Project milestones carry project_id, group milestones group_id. */
export const Milestone = obj(
  {
    id: Int(),
    iid: Int(),
    ...optional({ project_id: Int(), group_id: NInt() }),
    title: Str(),
    description: NStr(),
    state: Str(),
    created_at: Time(),
    updated_at: Time(),
    due_date: NDay(),
    start_date: NDay(),
    expired: Bool(),
    web_url: Str(),
  },
  { title: 'Milestone' },
);

const pipelineBasicProps = {
  id: Int(),
  iid: Int(),
  project_id: Int(),
  sha: Str(),
  ref: Str(),
  status: Str(),
  source: Str(),
  created_at: Time(),
  updated_at: Time(),
  web_url: Str(),
};

export const PipelineBasic = obj(pipelineBasicProps, { title: 'PipelineBasic' });

export const Pipeline = obj(
  {
    ...pipelineBasicProps,
    before_sha: Str(),
    tag: Bool(),
    yaml_errors: NStr(),
    user: nullable(UserBasic),
    started_at: NTime(),
    finished_at: NTime(),
    committed_at: NTime(),
    duration: NInt(),
    queued_duration: NInt(),
    coverage: NStr(),
    detailed_status: obj({
      icon: Str(),
      text: Str(),
      label: Str(),
      group: Str(),
      tooltip: Str(),
      has_details: Bool(),
      details_path: Str(),
      illustration: nullable(Any()),
      favicon: Str(),
    }),
    archived: Bool(),
  },
  { title: 'Pipeline' },
);

export const CommitStatus = obj(
  {
    id: Int(),
    sha: Str(),
    ref: NStr(),
    status: Str(),
    name: Str(),
    target_url: NStr(),
    description: NStr(),
    created_at: Time(),
    started_at: NTime(),
    finished_at: NTime(),
    allow_failure: Bool(),
    coverage: nullable(Num()),
    pipeline_id: Int(),
    author: nullable(UserBasic),
  },
  { title: 'CommitStatus' },
);

/** Entities::EnvironmentBasic. */
export const EnvironmentBasic = obj({ id: Int(), name: Str(), slug: Str(), external_url: NStr(), created_at: Time(), updated_at: Time() });

export const Deployment = obj(
  {
    id: Int(),
    iid: Int(),
    ref: Str(),
    sha: Str(),
    created_at: Time(),
    updated_at: Time(),
    user: nullable(UserBasic),
    environment: nullable(EnvironmentBasic),
    deployable: nullable(Any()),
    status: Str(),
  },
  { title: 'Deployment' },
);

/** Entities::Environment: `project` in lists and writes, `last_deployment` (without its environment) in a single read. */
export const Environment = obj({
  ...EnvironmentBasic.properties,
  tier: oneOfStrings(['production', 'staging', 'testing', 'development', 'other']),
  project: Type.Optional(Any()),
  last_deployment: Type.Optional(nullable(Any())),
  state: oneOfStrings(['available', 'stopping', 'stopped']),
  auto_stop_at: NTime(),
  description: NStr(),
  auto_stop_setting: oneOfStrings(['always', 'with_action']),
});

export const TimeStats = obj(
  { time_estimate: Int(), total_time_spent: Int(), human_time_estimate: NStr(), human_total_time_spent: NStr() },
  { title: 'TimeStats' },
);

/** The fields every merge request entity starts with (presentMergeRequestHead). */
const mrHeadProps = {
  id: Int(),
  iid: Int(),
  project_id: Int(),
  title: Str(),
  description: NStr(),
  state: Str(),
  created_at: Time(),
  updated_at: Time(),
};

const mrBasicProps = {
  ...mrHeadProps,
  merged_by: nullable(UserBasic),
  merge_user: nullable(UserBasic),
  merged_at: NTime(),
  closed_by: nullable(UserBasic),
  closed_at: NTime(),
  target_branch: Str(),
  source_branch: Str(),
  user_notes_count: Int(),
  upvotes: Int(),
  downvotes: Int(),
  author: nullable(obj({ ...userBasicProps, bot: Bool() })),
  assignees: Arr(UserBasic),
  assignee: nullable(UserBasic),
  reviewers: Arr(UserBasic),
  source_project_id: Int(),
  target_project_id: Int(),
  // Titles, or LabelDetails with with_labels_details=true.
  labels: Arr(Type.Union([Str(), LabelDetails])),
  draft: Bool(),
  imported: Bool(),
  imported_from: Str(),
  work_in_progress: Bool(),
  milestone: nullable(Milestone),
  merge_when_pipeline_succeeds: Bool(),
  merge_status: Str(),
  detailed_merge_status: Str(),
  merge_after: NTime(),
  sha: NStr(),
  merge_commit_sha: NStr(),
  squash_commit_sha: NStr(),
  discussion_locked: NBool(),
  should_remove_source_branch: NBool(),
  force_remove_source_branch: NBool(),
  prepared_at: NTime(),
  reference: Str(),
  references: obj({ short: Str(), relative: Str(), full: Str() }),
  web_url: Str(),
  time_stats: TimeStats,
  squash: Bool(),
  squash_on_merge: Bool(),
  task_completion_status: obj({ count: Int(), completed_count: Int() }),
  has_conflicts: Bool(),
  blocking_discussions_resolved: Bool(),
  approvals_before_merge: NInt(),
  ...optional({
    // render_html=true
    title_html: Str(),
    description_html: Str(),
    // Requests from a fork.
    allow_collaboration: Bool(),
    allow_maintainer_to_push: Bool(),
    // Group lists, for projects in a group.
    group_id: Int(),
  }),
};

/** MergeRequestBasic (lists). */
export const MergeRequestBasic = obj(mrBasicProps, { title: 'MergeRequestBasic' });

/** MergeRequestSimple (view=simple). */
export const MergeRequestSimple = obj(
  {
    ...mrHeadProps,
    web_url: Str(),
  },
  { title: 'MergeRequestSimple' },
);

/** A list entry: MergeRequestBasic, or MergeRequestSimple with view=simple. */
export const MergeRequestListEntry = Type.Unsafe<unknown>({ if: { type: 'object', required: ['author'] }, then: MergeRequestBasic, else: MergeRequestSimple });

const mrProps = {
  ...mrBasicProps,
  subscribed: Bool(),
  changes_count: NStr(),
  diff_refs: nullable(obj({ base_sha: Str(), head_sha: Str(), start_sha: Str() })),
  merge_error: NStr(),
  user: obj({ can_merge: Bool() }),
  ...optional({
    // When the project's CI is enabled.
    latest_build_started_at: NTime(),
    latest_build_finished_at: NTime(),
    first_deployed_to_production_at: NTime(),
    pipeline: nullable(PipelineBasic),
    // When the caller may read pipelines.
    head_pipeline: nullable(Pipeline),
    // Query options of GET.
    rebase_in_progress: Bool(),
    diverged_commits_count: Int(),
    first_contribution: Bool(),
  }),
};

/** MergeRequest: one request (read, create, update, merge). */
export const MergeRequest = obj(mrProps, { title: 'MergeRequest' });

const mrDiffProps = {
  old_path: Str(),
  new_path: Str(),
  a_mode: Str(),
  b_mode: Str(),
  new_file: Bool(),
  renamed_file: Bool(),
  deleted_file: Bool(),
  diff: Str(),
};

/** GET …/diffs entries. */
export const MergeRequestDiff = obj({ ...mrDiffProps, generated_file: Bool(), collapsed: Bool(), too_large: Bool() }, { title: 'MergeRequestDiff' });

/** GET …/changes: the request with its changes. */
export const MergeRequestChanges = obj({ ...mrProps, changes: Arr(obj(mrDiffProps)), overflow: Bool() }, { title: 'MergeRequestChanges' });

export const MergeRequestApprovals = obj(
  {
    ...mrHeadProps,
    merge_status: Str(),
    approved: Bool(),
    approvals_required: Int(),
    approvals_left: Int(),
    approved_by: Arr(obj({ user: UserBasic })),
  },
  { title: 'MergeRequestApprovals' },
);

export const AwardEmoji = obj(
  {
    id: Int(),
    name: Str(),
    user: nullable(UserBasic),
    created_at: Time(),
    updated_at: Time(),
    awardable_id: Int(),
    awardable_type: Str(),
    url: NStr(),
  },
  { title: 'AwardEmoji' },
);

export const MergeRequestBlock = obj(
  {
    id: Int(),
    blocking_merge_request: MergeRequestBasic,
    ...optional({ blocked_merge_request: MergeRequestBasic }),
    project_id: Int(),
  },
  { title: 'MergeRequestBlock' },
);

export const MergeRequestReviewer = obj({ user: UserBasic, state: Str(), created_at: Time() }, { title: 'MergeRequestReviewer' });

export const RebaseAccepted = obj({ rebase_in_progress: Bool() }, { title: 'RebaseAccepted' });
export const MergeRef = obj({ commit_id: Str() }, { title: 'MergeRef' });


/** …/notes and …/discussions/:discussion_id/notes (entities/note.ts). */
export const Note = obj(
  {
    id: Int(),
    type: NStr(),
    body: Str(),
    attachment: NStr(),
    author: nullable(UserBasic),
    created_at: Time(),
    updated_at: Time(),
    system: Bool(),
    noteable_id: Int(),
    noteable_type: Str(),
    project_id: Int(),
    ...optional({ commit_id: NStr(), position: nullable(obj({ base_sha: Str(), start_sha: Str(), head_sha: Str(), old_path: NStr(), new_path: NStr(), position_type: Str() })) }),
    resolvable: Bool(),
    ...optional({ resolved: Bool(), resolved_by: nullable(UserBasic), resolved_at: NTime() }),
    confidential: Bool(),
    internal: Bool(),
    imported: Bool(),
    imported_from: Str(),
    noteable_iid: Int(),
    commands_changes: obj({}),
  },
  { title: 'Note' },
);

/** …/discussions: a thread and its notes. */
export const Discussion = obj({ id: Str(), individual_note: Bool(), notes: Arr(Note) }, { title: 'Discussion' });
