// Project Markdown uploads (GitLab's lib/api/markdown_uploads.rb) and their web address
// (`/-/project/<id>/uploads/<secret>/<filename>`, Banzai::UploadsController).
import type { FastifyInstance } from 'fastify';
import { findUserRefsByIds } from '../../../db/repositories/users.js';
import { ApiError, forbidden, notFound, paramError } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { AccessLevel } from '../../../services/access.js';
import { findProject, type FoundProject } from '../../../services/projects/lookup.js';
import { uploadedFile } from '../../../services/groups/avatar.js';
import {
  cleanUploadName,
  contentTypeOf,
  createUpload,
  deleteUpload,
  findUploadBySecret,
  markdownOf,
  readUpload,
  registerUploadHooks,
  shownInline,
  type UploadRow,
} from '../../../services/uploads.js';
import { currentSession } from '../../../web/session.js';
import { integerPathParam, pathParam } from '../repository/common.js';
import { contentDisposition } from '../repository/files.js';

/** admin_upload / destroy_upload: Maintainers and up (and administrators). */
function assertAdminUpload(c: Ctx, p: FoundProject): void {
  c.requireUser();
  if (!c.user!.is_admin && p.access < AccessLevel.MAINTAINER) throw forbidden();
}

/** present_carrierwave_file!: the bytes as a download. */
async function sendAsAttachment(c: Ctx, row: UploadRow): Promise<Buffer> {
  const data = await readUpload(c.app, row);
  if (!data) throw notFound();
  c.header('Content-Type', 'application/octet-stream');
  c.header('Content-Disposition', contentDisposition('attachment', row.filename));
  c.header('Content-Transfer-Encoding', 'binary');
  return data;
}

async function uploadById(c: Ctx, p: FoundProject): Promise<UploadRow> {
  const id = integerPathParam(c, 'upload_id');
  const row = await c.app.db.selectFrom('uploads').selectAll().where('id', '=', id).where('project_id', '=', p.project.id).executeTakeFirst();
  if (!row) throw notFound();
  return row;
}

const NOT_THERE = "400 Bad request - The resource that you are attempting to access does not exist or you don't have permission to perform this action.";

export function registerUploadRoutes(app: FastifyInstance): void {
  registerUploadHooks();

  // POST /projects/:id/uploads (multipart `file`)
  route(app, 'POST', '/projects/:id/uploads', async function uploadFile(c) {
    const user = c.requireUser();
    const p = await findProject(c, pathParam(c, 'id'));
    c.params.requireAll(['file']);
    const data = uploadedFile(c.params.raw.file);
    const given = c.req.lwUploadNames?.file;
    if (!data || given === undefined) throw paramError('file is invalid');
    // upload_file is one of GitLab's archived abilities.
    if (p.project.archived) throw forbidden();
    const name = cleanUploadName(given);
    if (!name) throw paramError('file is invalid');
    const row = await createUpload(c.app, p.project.id, user.id, name, data);
    const url = `/uploads/${row.secret}/${row.filename}`;
    const { alt, markdown } = markdownOf(row.filename, url);
    return { id: row.id, alt, url, full_path: `/-/project/${p.project.id}/uploads/${row.secret}/${row.filename}`, markdown };
  });

  // GET /projects/:id/uploads (Maintainers)
  route(app, 'GET', '/projects/:id/uploads', async function listUploads(c) {
    const p = await findProject(c, pathParam(c, 'id'));
    assertAdminUpload(c, p);
    const rows = await paginateOffset(c, c.app.db.selectFrom('uploads').selectAll().where('project_id', '=', p.project.id).orderBy('created_at', 'desc').orderBy('id', 'desc'));
    const users = await findUserRefsByIds(c.app.db, [...new Set(rows.filter((r) => r.uploaded_by_user_id !== null).map((r) => r.uploaded_by_user_id!))]);
    return rows.map((r) => {
      const u = r.uploaded_by_user_id === null ? undefined : users.get(r.uploaded_by_user_id);
      return { id: r.id, size: r.size, filename: r.filename, created_at: r.created_at, uploaded_by: u ? { id: u.id, username: u.username, name: u.name } : null };
    });
  });

  // GET /projects/:id/uploads/:upload_id (Maintainers: ids can be guessed)
  route(app, 'GET', '/projects/:id/uploads/:upload_id', async function downloadById(c) {
    const p = await findProject(c, pathParam(c, 'id'));
    assertAdminUpload(c, p);
    return sendAsAttachment(c, await uploadById(c, p));
  });

  // GET /projects/:id/uploads/:secret/:filename (whoever reads the project)
  route(app, 'GET', '/projects/:id/uploads/:secret/:filename', async function downloadBySecret(c) {
    const p = await findProject(c, pathParam(c, 'id'));
    const row = await findUploadBySecret(c.app, p.project.id, pathParam(c, 'secret'), pathParam(c, 'filename'));
    if (!row) throw notFound();
    return sendAsAttachment(c, row);
  });

  // DELETE /projects/:id/uploads/:upload_id
  route(app, 'DELETE', '/projects/:id/uploads/:upload_id', async function deleteById(c) {
    const p = await findProject(c, pathParam(c, 'id'));
    assertAdminUpload(c, p);
    await deleteUpload(c.app, await uploadById(c, p));
    return undefined;
  });

  // DELETE /projects/:id/uploads/:secret/:filename (nothing there: GitLab's 400)
  route(app, 'DELETE', '/projects/:id/uploads/:secret/:filename', async function deleteBySecret(c) {
    const p = await findProject(c, pathParam(c, 'id'));
    assertAdminUpload(c, p);
    const row = await findUploadBySecret(c.app, p.project.id, pathParam(c, 'secret'), pathParam(c, 'filename'));
    if (!row) throw new ApiError(400, { message: NOT_THERE });
    await deleteUpload(c.app, row);
    return undefined;
  });
}

// GET /-/project/<id>/uploads/<secret>/<filename>: the address Markdown links name. Whoever may
// read the project (a signed-in browser by its session; tokens as on the API); 404 for everyone
// else, as GitLab's Banzai::UploadsController. Images, video, audio and PDFs inline.
async function webUpload(c: Ctx) {
  if (!c.user) c.user = (await currentSession(c.app, c.req))?.user ?? null;
  let p: FoundProject;
  try {
    p = await findProject(c, pathParam(c, 'id'));
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 403 || err.status === 401)) throw notFound();
    throw err;
  }
  const row = await findUploadBySecret(c.app, p.project.id, pathParam(c, 'secret'), pathParam(c, 'filename'));
  const data = row ? await readUpload(c.app, row) : null;
  if (!row || !data) throw notFound();
  c.header('Content-Type', contentTypeOf(row.filename));
  c.header('Content-Disposition', contentDisposition(shownInline(row.filename) ? 'inline' : 'attachment', row.filename));
  c.header('Cache-Control', 'max-age=0, private, must-revalidate');
  c.header('X-Content-Type-Options', 'nosniff');
  return data;
}

/** Registered on the app itself, outside /api/v4. */
export function registerWebUploadRoutes(app: FastifyInstance): void {
  // Also reached from the older address, /<namespace>/<project>/uploads/… (http/web-addresses.ts).
  route(app, 'GET', '/-/project/:id/uploads/:secret/:filename', webUpload, { sessionless: true });
}
