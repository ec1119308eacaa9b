// Repository entities (entities/commit.ts, entities/branch.ts, repository/*.ts): Commit,
// CommitDetail, Diff, Branch, Tag, Compare, files and tree entries.
import { Arr, Bool, Int, NStr, Str, Any, dict, nullable, obj, oneOfStrings, optional, Time } from './common.js';
import { UserBasic } from './users.js';

export const CommitStats = obj({ additions: Int(), deletions: Int(), total: Int() }, { title: 'CommitStats' });

const commitProps = {
  id: Str(),
  short_id: Str(),
  created_at: Time(),
  parent_ids: Arr(Str()),
  title: Str(),
  message: Str(),
  author_name: Str(),
  author_email: Str(),
  authored_date: Time(),
  committer_name: Str(),
  committer_email: Str(),
  committed_date: Time(),
  trailers: dict(Str()),
  extended_trailers: dict(Arr(Str())),
  web_url: Str(),
};

/** Entities::Commit */
export const Commit = obj(commitProps, { title: 'Commit' });

/** A GET /repository/commits entry (stats with with_stats=true). */
export const CommitListEntry = obj({ ...commitProps, ...optional({ stats: CommitStats }) }, { title: 'CommitListEntry' });

/** Entities::CommitDetail (stats unless stats=false). */
export const CommitDetail = obj(
  { ...commitProps, ...optional({ stats: CommitStats }), status: NStr(), project_id: Int(), last_pipeline: nullable(Any()) },
  { title: 'CommitDetail' },
);

/** Entities::Diff */
export const Diff = obj(
  {
    diff: Str(),
    new_path: Str(),
    old_path: Str(),
    a_mode: Str(),
    b_mode: Str(),
    new_file: Bool(),
    renamed_file: Bool(),
    deleted_file: Bool(),
    generated_file: Bool(),
  },
  { title: 'Diff' },
);

/** Entities::Branch */
export const Branch = obj(
  {
    name: Str(),
    commit: Commit,
    merged: Bool(),
    protected: Bool(),
    developers_can_push: Bool(),
    developers_can_merge: Bool(),
    can_push: Bool(),
    default: Bool(),
    web_url: Str(),
  },
  { title: 'Branch' },
);

/** Entities::Tag (`release` is {tag_name, description} or null). */
export const Tag = obj(
  {
    name: Str(),
    message: NStr(),
    target: Str(),
    commit: nullable(Commit),
    release: nullable(obj({ tag_name: Str(), description: NStr() })),
    protected: Bool(),
    created_at: nullable(Time()),
  },
  { title: 'Tag' },
);

/** Entities::Compare */
export const Compare = obj(
  {
    commit: nullable(Commit),
    commits: Arr(Commit),
    diffs: Arr(Diff),
    compare_timeout: Bool(),
    compare_same_ref: Bool(),
    web_url: Str(),
  },
  { title: 'Compare' },
);

/** GET /repository/files/:file_path */
export const RepositoryFile = obj(
  {
    file_name: Str(),
    file_path: Str(),
    size: Int(),
    encoding: Str(),
    content_sha256: Str(),
    ref: Str(),
    blob_id: Str(),
    commit_id: Str(),
    last_commit_id: Str(),
    execute_filemode: Bool(),
    content: Str(),
  },
  { title: 'RepositoryFile' },
);

/** POST/PUT /repository/files/:file_path */
export const FileCommit = obj({ file_path: Str(), branch: Str() }, { title: 'FileCommit' });

/** GET /repository/tree entries. */
export const TreeItem = obj(
  { id: Str(), name: Str(), type: oneOfStrings(['tree', 'blob', 'commit']), path: Str(), mode: Str() },
  { title: 'TreeItem' },
);

/** Entities::Releases::Link */
export const ReleaseLink = obj(
  { id: Int(), name: Str(), url: Str(), direct_asset_url: Str(), link_type: Str() },
  { title: 'ReleaseLink' },
);

/** Entities::Release (releases/routes.ts); commit, paths and sources only for callers who may read the code. */
export const Release = obj(
  {
    name: Str(),
    tag_name: Str(),
    ...optional({ description_html: Str(), author: UserBasic, commit: nullable(Commit), milestones: Arr(Any()), commit_path: Str(), tag_path: Str(), evidences: Arr(Any()) }),
    description: NStr(),
    created_at: Time(),
    released_at: Time(),
    upcoming_release: Bool(),
    assets: obj({ count: Int(), ...optional({ sources: Arr(obj({ format: Str(), url: Str() })) }), links: Arr(ReleaseLink) }),
    _links: obj({ self: Str(), ...optional({ edit_url: Str() }) }),
  },
  { title: 'Release' },
);

/** GET …/repository/blobs/:sha */
export const Blob = obj({ size: Int(), encoding: Str(), content: Str(), sha: Str() }, { title: 'Blob' });

/** Entities::Contributor */
export const Contributor = obj({ name: Str(), email: Str(), commits: Int(), additions: Int(), deletions: Int() }, { title: 'Contributor' });

/** GET …/repository/commits/:sha/refs */
export const CommitRef = obj({ type: Str(), name: Str() }, { title: 'CommitRef' });

/** Entities::CommitNote */
export const CommitNote = obj(
  { note: Str(), path: NStr(), line: nullable(Int()), line_type: NStr(), author: nullable(UserBasic), created_at: Time() },
  { title: 'CommitNote' },
);

/** Entities::ProtectedRefAccess (with EE's user_id and group_id, null here). */
export const ProtectedRefAccess = obj(
  {
    id: Int(),
    access_level: Int(),
    access_level_description: Str(),
    user_id: nullable(Int()),
    group_id: nullable(Int()),
  },
  { title: 'ProtectedRefAccess' },
);

/** Entities::ProtectedBranch */
export const ProtectedBranch = obj(
  {
    id: Int(),
    name: Str(),
    push_access_levels: Arr(ProtectedRefAccess),
    merge_access_levels: Arr(ProtectedRefAccess),
    allow_force_push: Bool(),
    unprotect_access_levels: Arr(ProtectedRefAccess),
    code_owner_approval_required: Bool(),
    inherited: Bool(),
  },
  { title: 'ProtectedBranch' },
);

/** Entities::ProtectedTag (no id, as GitLab). */
export const ProtectedTag = obj(
  {
    name: Str(),
    create_access_levels: Arr(ProtectedRefAccess),
  },
  { title: 'ProtectedTag' },
);

/** Entities::BlameRange with its BlameRangeCommit. */
export const BlameRange = obj({
  commit: obj({
    id: Str(),
    parent_ids: Arr(Str()),
    message: Str(),
    authored_date: Time(),
    author_name: Str(),
    author_email: Str(),
    committed_date: Time(),
    committer_name: Str(),
    committer_email: Str(),
  }),
  lines: Arr(Str()),
});
