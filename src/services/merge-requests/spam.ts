// Spam check on merge request titles and descriptions (spec document 1 §7.4): configurable rules
// (regular expressions), an interface for external checkers, a CAPTCHA flow with a pluggable
// verifier, and spam logs kept for administrators.
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { UserRow } from '../../db/repositories/users.js';
import { ApiError } from '../../http/errors.js';

export interface SpamInput {
  title: string;
  description: string | null;
  user: UserRow;
  ip: string;
}

/** An external spam service: returns true when the content is spam. */
export type SpamChecker = (input: SpamInput) => Promise<boolean> | boolean;
/** Verifies a CAPTCHA response token with the CAPTCHA service (version 2 challenge). */
export type CaptchaVerifier = (response: string, ip: string) => Promise<boolean>;

export interface SpamSettings {
  patterns: RegExp[];
  checkers: SpamChecker[];
  /** Set when a CAPTCHA service is configured. */
  captchaSiteKey: string | null;
  verifier: CaptchaVerifier | null;
}

const settingsByApp = new WeakMap<AppContext, SpamSettings>();

/** reCAPTCHA v2's siteverify protocol, the one CAPTCHA type GitLab supports. */
function siteVerify(url: string, secret: string): CaptchaVerifier {
  return async function verifyWithService(response, ip) {
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ secret, response, remoteip: ip }).toString(),
        signal: AbortSignal.timeout(5000),
      });
      const body = (await res.json()) as { success?: boolean };
      return body.success === true;
    } catch {
      return false;
    }
  };
}

/**
 * Settings from the environment: LABWRIGHT_SPAM_PATTERNS (regular expressions, one per line,
 * case-insensitive), LABWRIGHT_CAPTCHA_SITE_KEY, LABWRIGHT_CAPTCHA_SECRET and
 * LABWRIGHT_CAPTCHA_VERIFY_URL (default Google's reCAPTCHA siteverify).
 */
export function settingsFromEnv(env: NodeJS.ProcessEnv): SpamSettings {
  const patterns: RegExp[] = [];
  for (const line of (env.LABWRIGHT_SPAM_PATTERNS ?? '').split('\n')) {
    const p = line.trim();
    if (!p) continue;
    try {
      patterns.push(new RegExp(p, 'i'));
    } catch {
      throw new Error(`LABWRIGHT_SPAM_PATTERNS: invalid regular expression: ${p}`);
    }
  }
  const siteKey = env.LABWRIGHT_CAPTCHA_SITE_KEY || null;
  const secret = env.LABWRIGHT_CAPTCHA_SECRET || null;
  const url = env.LABWRIGHT_CAPTCHA_VERIFY_URL || 'https://www.google.com/recaptcha/api/siteverify';
  return { patterns, checkers: [], captchaSiteKey: siteKey && secret ? siteKey : null, verifier: siteKey && secret ? siteVerify(url, secret) : null };
}

export function spamSettings(app: AppContext): SpamSettings {
  let s = settingsByApp.get(app);
  if (!s) {
    s = settingsFromEnv(process.env);
    settingsByApp.set(app, s);
  }
  return s;
}

/** Replaces the spam settings of one app (embedding, tests, an admin reconfiguring at run time). */
export function configureSpam(app: AppContext, settings: Partial<SpamSettings>): void {
  settingsByApp.set(app, Object.assign({}, spamSettings(app), { ...settings }));
}

async function isSpam(settings: SpamSettings, input: SpamInput): Promise<boolean> {
  const text = `${input.title}\n${input.description ?? ''}`;
  if (settings.patterns.some((re) => re.test(text))) return true;
  for (const check of settings.checkers) if (await check(input)) return true;
  return false;
}

export interface CaptchaHeaders {
  response: string | undefined;
  spamLogId: string | undefined;
}

/**
 * Throws GitLab's spam responses when the content is spam: 400 without a CAPTCHA service, 409 with
 * `needs_captcha_response` when one is configured. A resubmission carrying a verified CAPTCHA
 * response for this user's spam log passes.
 */
export async function checkSpam(app: AppContext, input: SpamInput, headers: CaptchaHeaders, kind = 'MergeRequest'): Promise<void> {
  if (input.user.is_admin) return;
  const settings = spamSettings(app);
  if (settings.verifier && headers.response && headers.spamLogId && /^\d+$/.test(headers.spamLogId)) {
    const log = await app.db
      .selectFrom('spam_logs')
      .selectAll()
      .where('id', '=', Number(headers.spamLogId))
      .where('user_id', '=', input.user.id)
      .executeTakeFirst();
    if (log && (await settings.verifier(headers.response, input.ip))) {
      await app.db.updateTable('spam_logs').set({ recaptcha_verified: 1 }).where('id', '=', log.id).execute();
      return;
    }
  }
  if (!(await isSpam(settings, input))) return;
  const noun = kind === 'Issue' ? 'issue' : 'merge request';
  const log = await app.db
    .insertInto('spam_logs')
    .values({
      user_id: input.user.id,
      title: input.title,
      description: input.description,
      source_ip: input.ip,
      user_agent: null,
      noteable_type: kind,
      recaptcha_verified: 0,
      submitted_as_ham: 0,
      created_at: nowIso(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (settings.captchaSiteKey) {
    throw new ApiError(409, {
      message: { error: `Your ${noun} has been recognized as spam. Please, change the content or solve the reCAPTCHA to proceed.` },
      needs_captcha_response: true,
      spam_log_id: log.id,
      captcha_site_key: settings.captchaSiteKey,
    });
  }
  throw new ApiError(400, { message: { error: `Your ${noun} has been recognized as spam and has been discarded.` } });
}
