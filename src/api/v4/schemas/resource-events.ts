// Entities::ResourceLabelEvent, ResourceStateEvent and ResourceMilestoneEvent.
import { Int, NInt, NStr, Str, nullable, obj, Time } from './common.js';
import { Milestone } from './merge-requests.js';
import { UserBasic } from './users.js';

const head = { id: Int(), user: nullable(UserBasic), created_at: Time(), resource_type: Str(), resource_id: Int() };

export const ResourceLabelEvent = obj(
  { ...head, label: obj({ id: Int(), name: Str(), color: Str(), description: NStr(), description_html: Str(), text_color: Str() }), action: Str() },
  { title: 'ResourceLabelEvent' },
);
export const ResourceStateEvent = obj({ ...head, source_commit: NStr(), source_merge_request_id: NInt(), state: Str() }, { title: 'ResourceStateEvent' });
export const ResourceMilestoneEvent = obj({ ...head, milestone: nullable(Milestone), action: Str(), state: NStr() }, { title: 'ResourceMilestoneEvent' });
