// The environment tests run the git CLI in: no prompts, no system or user configuration, and a
// fixed identity for commits made on the client side.
export const GIT_ENV = {
  ...process.env,
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Local Dev',
  GIT_AUTHOR_EMAIL: 'local@example.com',
  GIT_COMMITTER_NAME: 'Local Dev',
  GIT_COMMITTER_EMAIL: 'local@example.com',
};
