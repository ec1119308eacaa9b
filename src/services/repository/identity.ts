// Who a commit made through the API is by: the acting user, as author and committer. GitLab lets
// the client override the author (author_name / author_email); the committer stays the user.
import type { Identity } from '../../git/index.js';
import type { UserRow } from '../../db/repositories/users.js';

export interface CommitPeople {
  author: Identity;
  committer: Identity;
}

/** What git keeps of an identity field: it refuses '<', '>' and line breaks, and trims. */
function clean(value: string | undefined): string {
  return (value ?? '').replace(/[<>\n\r\0]/g, '').trim();
}

export function commitPeople(user: UserRow, overrides: { authorName?: string | undefined; authorEmail?: string | undefined } = {}): CommitPeople {
  const date = new Date();
  const committer: Identity = { name: clean(user.name) || user.username, email: clean(user.email), date };
  const author: Identity = {
    name: clean(overrides.authorName) || committer.name,
    email: clean(overrides.authorEmail) || committer.email,
    date,
  };
  return { author, committer };
}
