// OpenID Connect: the `nonce` of an authorization request travels with its code into the ID token.
import type { LabwrightMigration } from './helpers.js';

export const openidNonce: LabwrightMigration = {
  name: '0017-openid-nonce',
  async up(ctx) {
    await ctx.db.schema.alterTable('oauth_access_grants').addColumn('nonce', 'text').execute();
  },
};
