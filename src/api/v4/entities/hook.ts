// Presenters named after GitLab's Entities::ProjectHook (Hook + ProjectHook fields) and
// Entities::WebHookLog. Field order follows GitLab. The token and the values of URL variables
// and custom headers are never shown: only their keys.
import type { AppContext } from '../../../context.js';
import type { Selectable } from 'kysely';
import type { WebHookLogsTable } from '../../../db/tables/web-hooks.js';
import { alertStatus, flagsOf, type HookRow } from '../../../services/webhooks/hooks.js';
import { readableSecrets } from '../../../services/webhooks/write.js';

function keysOf(map: Record<string, string>) {
  return Object.keys(map).map((key) => ({ key }));
}

/** `detail`: the single-hook view, with url_variables and custom_headers (the list leaves them out). */
export function presentProjectHook(app: AppContext, row: HookRow, detail: boolean): Record<string, unknown> {
  const flags = flagsOf(row);
  // The URL as saved (`{name}` placeholders, credentials included: GitLab shows it so, and clients
  // send it back on every edit); unreadable secrets (another instance secret) show the masked URL.
  const secrets = readableSecrets(app, row) ?? { url: row.masked_url, urlVariables: {}, customHeaders: {} };
  return {
    id: row.id,
    url: secrets.url,
    name: row.name,
    description: row.description,
    created_at: row.created_at,
    push_events: flags.push_events,
    tag_push_events: flags.tag_push_events,
    merge_requests_events: flags.merge_requests_events,
    repository_update_events: false,
    enable_ssl_verification: row.enable_ssl_verification === 1,
    alert_status: alertStatus(app, row),
    disabled_until: app.config.webhooks.autoDisable ? row.disabled_until : null,
    ...(detail ? { url_variables: keysOf(secrets.urlVariables) } : {}),
    push_events_branch_filter: row.push_events_branch_filter,
    branch_filter_strategy: row.branch_filter_strategy,
    custom_webhook_template: row.custom_webhook_template,
    ...(detail ? { custom_headers: keysOf(secrets.customHeaders) } : {}),
    project_id: row.project_id,
    issues_events: flags.issues_events,
    confidential_issues_events: flags.confidential_issues_events,
    note_events: flags.note_events,
    confidential_note_events: flags.confidential_note_events,
    pipeline_events: flags.pipeline_events,
    wiki_page_events: flags.wiki_page_events,
    deployment_events: flags.deployment_events,
    feature_flag_events: flags.feature_flag_events,
    job_events: flags.job_events,
    releases_events: flags.releases_events,
    milestone_events: flags.milestone_events,
    emoji_events: flags.emoji_events,
    resource_access_token_events: flags.resource_access_token_events,
    resource_deploy_token_events: flags.resource_deploy_token_events,
    vulnerability_events: flags.vulnerability_events,
  };
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

export function presentWebHookLog(row: Selectable<WebHookLogsTable>): Record<string, unknown> {
  return {
    id: row.id,
    url: row.url,
    trigger: row.trigger,
    request_headers: parsed(row.request_headers),
    request_data: parsed(row.request_data),
    response_headers: parsed(row.response_headers),
    response_body: row.response_body,
    execution_duration: row.execution_duration,
    response_status: row.response_status,
    created_at: row.created_at,
  };
}
