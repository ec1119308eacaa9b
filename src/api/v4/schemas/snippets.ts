// Entities::Snippet (PersonalSnippet and ProjectSnippet show the same fields).
import { Arr, Bool, Int, NInt, NStr, Str, nullable, obj, Time } from './common.js';
import { UserBasic } from './users.js';

export const Snippet = obj(
  {
    id: Int(),
    title: Str(),
    description: NStr(),
    visibility: Str(),
    author: nullable(UserBasic),
    created_at: Time(),
    updated_at: Time(),
    project_id: NInt(),
    web_url: Str(),
    raw_url: Str(),
    ssh_url_to_repo: Str(),
    http_url_to_repo: Str(),
    file_name: NStr(),
    files: Arr(obj({ path: Str(), raw_url: Str() })),
    imported: Bool(),
    imported_from: Str(),
  },
  { title: 'Snippet' },
);
