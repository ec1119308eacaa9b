// Namespaces (entities/namespace.ts): NamespaceBasic fields, counts, and the billing fields shown
// to owners and administrators.
import { Arr, Bool, Int, NInt, Str, obj, optional, NTime, NDay } from './common.js';
import { namespaceBasicProps } from './projects.js';

export const Namespace = obj(
  {
    ...namespaceBasicProps,
    root_repository_size: Int(),
    projects_count: Int(),
    ...optional({
      billable_members_count: Int(),
      plan: Str(),
      end_date: NDay(),
      trial_ends_on: NDay(),
      trial: Bool(),
      members_count_with_descendants: Int(),
      max_seats_used: Int(),
      max_seats_used_changed_at: NTime(),
      seats_in_use: Int(),
      ci_minutes_usage: obj({ total_minutes_used: Int(), monthly_minutes_used: Int(), purchased_minutes_used: Int() }),
      shared_runners_minutes_limit: NInt(),
      extra_shared_runners_minutes_limit: NInt(),
      additional_purchased_storage_size: Int(),
      additional_purchased_storage_ends_on: NDay(),
    }),
  },
  { title: 'Namespace' },
);

/** GET /namespaces/:id/exists */
export const NamespaceExists = obj({ exists: Bool(), suggests: Arr(Str()) }, { title: 'NamespaceExists' });
