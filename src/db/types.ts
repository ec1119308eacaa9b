// The database interface Kysely checks queries against. Each module adds its tables here.
import type {
  MembersTable,
  NamespacesTable,
  OauthAccessGrantsTable,
  OauthAccessTokensTable,
  OauthApplicationsTable,
  PersonalAccessTokensTable,
  RedirectRoutesTable,
  RoutesTable,
  UsersTable,
} from './tables/core.js';

export interface DB {
  users: UsersTable;
  namespaces: NamespacesTable;
  routes: RoutesTable;
  redirect_routes: RedirectRoutesTable;
  members: MembersTable;
  personal_access_tokens: PersonalAccessTokensTable;
  oauth_applications: OauthApplicationsTable;
  oauth_access_grants: OauthAccessGrantsTable;
  oauth_access_tokens: OauthAccessTokensTable;
}
