// Entities::Event and Entities::PushEventPayload (GET /events, /users/:id/events, /projects/:id/events).
import { Bool, Int, NInt, NStr, Str, nullable, obj, optional, Time } from './common.js';
import { Note } from './merge-requests.js';
import { UserBasic } from './users.js';
import { WikiPageBasic } from './wikis.js';

export const PushEventPayload = obj(
  {
    commit_count: Int(),
    action: Str(),
    ref_type: Str(),
    commit_from: NStr(),
    commit_to: NStr(),
    ref: NStr(),
    commit_title: NStr(),
    ref_count: NInt(),
  },
  { title: 'PushEventPayload' },
);

export const Event = obj(
  {
    id: Int(),
    project_id: Int(),
    action_name: Str(),
    target_id: NInt(),
    target_iid: NInt(),
    target_type: NStr(),
    author_id: Int(),
    target_title: NStr(),
    created_at: Time(),
    ...optional({ note: Note, author: UserBasic, wiki_page: nullable(WikiPageBasic), push_data: PushEventPayload }),
    imported: Bool(),
    imported_from: Str(),
    author_username: nullable(Str()),
  },
  { title: 'Event' },
);
