// Project webhooks and their delivery log (migration 0018).
import type { Generated } from 'kysely';

export interface WebHooksTable {
  id: Generated<number>;
  project_id: number;
  encrypted_url: string;
  masked_url: string;
  encrypted_token: string | null;
  encrypted_url_variables: string | null;
  encrypted_custom_headers: string | null;
  name: string | null;
  description: string | null;
  /** JSON object of event flags. */
  events: string;
  push_events_branch_filter: string | null;
  branch_filter_strategy: Generated<string>;
  enable_ssl_verification: Generated<number>;
  custom_webhook_template: string | null;
  recent_failures: Generated<number>;
  backoff_count: Generated<number>;
  disabled_until: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebHookLogsTable {
  id: Generated<number>;
  web_hook_id: number;
  trigger: string;
  url: string;
  url_hash: string;
  /** JSON objects. */
  request_headers: string;
  request_data: string;
  response_headers: string;
  response_body: string;
  response_status: string;
  execution_duration: number;
  internal_error_message: string | null;
  created_at: string;
  updated_at: string;
}
