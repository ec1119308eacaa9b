// Project Markdown uploads (GitLab's UploadService, FileUploader and Uploads::DestroyService): a
// file attached to an issue, merge request or comment, kept under data/uploads/<id> and found by
// its project, a 32-hex secret and its (sanitised) name; the project's uploads_size follows.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Selectable } from 'kysely';
import type { AppContext } from '../context.js';
import { nowIso } from '../db/database.js';
import type { UploadsTable } from '../db/tables/uploads.js';
import { projectDeletionHooks } from './projects/create.js';
import { userDeletionHooks } from './users.js';
import { removeReposWhenGone } from './repository/removal.js';
import { storedSize } from './repository/repository-size.js';

export type UploadRow = Selectable<UploadsTable>;

const EMBEDDABLE = /\.(png|jpe?g|gif|bmp|tiff|ico|webp|mp4|m4v|mov|webm|ogv|mp3|oga|ogg|spx|wav)$/i;
const DANGEROUS_EMBEDDABLE = /\.svg$/i;
/** Shown inline in a browser (UploadsActions: embeddable files and PDFs); the rest are downloads. */
const INLINE = /\.(png|jpe?g|gif|bmp|tiff|ico|webp|mp4|m4v|mov|webm|ogv|mp3|oga|ogg|spx|wav|pdf)$/i;

const TYPES: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', bmp: 'image/bmp', tiff: 'image/tiff', ico: 'image/vnd.microsoft.icon', webp: 'image/webp',
  mp4: 'video/mp4', m4v: 'video/mp4', mov: 'video/quicktime', webm: 'video/webm', ogv: 'video/ogg',
  mp3: 'audio/mpeg', oga: 'audio/ogg', ogg: 'audio/ogg', spx: 'audio/ogg', wav: 'audio/wav',
  pdf: 'application/pdf', svg: 'image/svg+xml', txt: 'text/plain', md: 'text/markdown', csv: 'text/csv', json: 'application/json', zip: 'application/zip', gz: 'application/gzip',
  // GitLab serves JavaScript as text (never as a script of this origin).
  js: 'text/plain',
};

export function uploadsDir(app: AppContext): string {
  return join(app.config.dataDir, 'uploads');
}

function filePath(app: AppContext, id: number): string {
  return join(uploadsDir(app), String(id));
}

/** CarrierWave's sanitising: anything but word characters, `.`, `-` and `+` becomes `_`; never `.` or `..`. */
export function cleanUploadName(name: string): string {
  const base = name.replace(/\\/g, '/').split('/').pop() ?? '';
  // Ruby's [[:word:]]: letters, marks, decimal digits, connector punctuation.
  let clean = base.replace(/[^\p{L}\p{M}\p{Nd}\p{Pc}.+-]/gu, '_');
  if (clean.length > 255) {
    const dot = clean.lastIndexOf('.');
    const ext = dot > 0 && clean.length - dot <= 16 ? clean.slice(dot) : '';
    clean = clean.slice(0, 255 - ext.length) + ext;
  }
  return /^\.+$/.test(clean) ? clean.replace(/\./g, '_') : clean;
}

/** FileMarkdownLinkBuilder: `![name](url)` for images, video and audio (name without extension; SVG keeps it), `[name](url)` otherwise. */
export function markdownOf(filename: string, url: string): { alt: string; markdown: string } {
  const embeddable = EMBEDDABLE.test(filename);
  const alt = embeddable ? filename.replace(/\.[^.]*$/, '') : filename;
  const text = alt.replace(/]/g, '\\]');
  return { alt, markdown: `${embeddable || DANGEROUS_EMBEDDABLE.test(filename) ? '!' : ''}[${text}](${url})` };
}

export function contentTypeOf(filename: string): string {
  const ext = /\.([^.]+)$/.exec(filename)?.[1]?.toLowerCase() ?? '';
  return TYPES[ext] ?? 'application/octet-stream';
}

export function shownInline(filename: string): boolean {
  return INLINE.test(filename);
}

/** The project's uploads_size: the sum of its uploads (never thrown: the change stands). */
async function measureUploads(app: AppContext, projectId: number): Promise<void> {
  try {
    const sum = await app.db.selectFrom('uploads').select((eb) => eb.fn.sum<number>('size').as('size')).where('project_id', '=', projectId).executeTakeFirst();
    await app.db.updateTable('projects').set({ uploads_size: storedSize(Number(sum?.size ?? 0)) }).where('id', '=', projectId).execute();
  } catch (err) {
    app.log.warn({ err, projectId }, 'could not measure uploads');
  }
}

/** Stores a file: the row first (its id names the file), removed again if the file cannot be written. */
export async function createUpload(app: AppContext, projectId: number, userId: number, name: string, data: Buffer): Promise<UploadRow> {
  const row = await app.db
    .insertInto('uploads')
    .values({ project_id: projectId, secret: randomBytes(16).toString('hex'), filename: name, size: data.length, uploaded_by_user_id: userId, created_at: nowIso() })
    .returningAll()
    .executeTakeFirstOrThrow();
  try {
    await mkdir(uploadsDir(app), { recursive: true });
    await writeFile(filePath(app, row.id), data, { mode: 0o600 });
  } catch (err) {
    await app.db.deleteFrom('uploads').where('id', '=', row.id).execute().catch(() => undefined);
    throw err;
  }
  await measureUploads(app, projectId);
  return row;
}

export async function readUpload(app: AppContext, row: UploadRow): Promise<Buffer | null> {
  return readFile(filePath(app, row.id)).catch(() => null);
}

export function findUploadBySecret(app: AppContext, projectId: number, secret: string, filename: string): Promise<UploadRow | undefined> {
  if (!/^[0-9a-f]{32}$/.test(secret)) return Promise.resolve(undefined);
  return app.db.selectFrom('uploads').selectAll().where('project_id', '=', projectId).where('secret', '=', secret).where('filename', '=', filename).executeTakeFirst();
}

export async function deleteUpload(app: AppContext, row: UploadRow): Promise<void> {
  await app.db.deleteFrom('uploads').where('id', '=', row.id).execute();
  await rm(filePath(app, row.id), { force: true });
  await measureUploads(app, row.project_id);
}

let registered = false;

/** A deleted project's uploads go with it; a deleted user's stay with their projects (uploader unknown). */
export function registerUploadHooks(): void {
  if (registered) return;
  registered = true;
  projectDeletionHooks.push(async function deleteProjectUploads(app, trx, projectId) {
    const ids = (await trx.selectFrom('uploads').select('id').where('project_id', '=', projectId).execute()).map((r) => r.id);
    if (!ids.length) return;
    await trx.deleteFrom('uploads').where('project_id', '=', projectId).execute();
    removeReposWhenGone(app, 'uploads', ids, (id) => filePath(app, id), (path) => rm(path, { force: true }));
  });
  userDeletionHooks.push(async function forgetUploader(_app, trx, user) {
    await trx.updateTable('uploads').set({ uploaded_by_user_id: null }).where('uploaded_by_user_id', '=', user.id).execute();
  });
}
