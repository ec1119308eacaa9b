// Response schemas of the project hooks API (Entities::ProjectHook, Entities::WebHookLog).
import { Any, Arr, Bool, Int, NBool, NStr, NTime, Num, Str, Time, dict, obj, oneOfStrings, optional } from './common.js';

const Key = obj({ key: Str() });

/** The single-hook view has url_variables and custom_headers; the list leaves them out. */
export const ProjectHook = obj(
  {
    id: Int(),
    url: Str(),
    name: NStr(),
    description: NStr(),
    created_at: Time(),
    push_events: Bool(),
    tag_push_events: Bool(),
    merge_requests_events: Bool(),
    repository_update_events: Bool(),
    enable_ssl_verification: Bool(),
    alert_status: oneOfStrings(['executable', 'temporarily_disabled', 'disabled']),
    disabled_until: NTime(),
    ...optional({ url_variables: Arr(Key), custom_headers: Arr(Key) }),
    push_events_branch_filter: NStr(),
    branch_filter_strategy: oneOfStrings(['wildcard', 'regex', 'all_branches']),
    custom_webhook_template: NStr(),
    project_id: Int(),
    issues_events: Bool(),
    confidential_issues_events: Bool(),
    note_events: Bool(),
    confidential_note_events: NBool(),
    pipeline_events: Bool(),
    wiki_page_events: Bool(),
    deployment_events: Bool(),
    feature_flag_events: Bool(),
    job_events: Bool(),
    releases_events: Bool(),
    milestone_events: Bool(),
    emoji_events: Bool(),
    resource_access_token_events: Bool(),
    resource_deploy_token_events: Bool(),
    vulnerability_events: Bool(),
  },
  { title: 'ProjectHook' },
);

export const WebHookLog = obj(
  {
    id: Int(),
    url: Str(),
    trigger: Str(),
    request_headers: dict(Str()),
    request_data: Any(),
    response_headers: dict(Str()),
    response_body: Str(),
    execution_duration: Num(),
    response_status: Str(),
    created_at: Time(),
  },
  { title: 'WebHookLog' },
);

export const RetryWebhookEvent = obj({ response_status: Int() }, { title: 'RetryWebhookEvent' });

