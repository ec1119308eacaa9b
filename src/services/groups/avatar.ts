// Group avatars: validated image uploads kept under the data directory, served by
// GET /groups/:id/avatar and /uploads/-/system/group/avatar/:id/:file.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppContext } from '../../context.js';
import { validationError } from '../../http/errors.js';

export const AVATAR_MAX_BYTES = 200 * 1024;

const TYPES: Array<{ ext: string; mime: string; test: (b: Buffer) => boolean }> = [
  { ext: 'png', mime: 'image/png', test: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  { ext: 'jpg', mime: 'image/jpeg', test: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { ext: 'gif', mime: 'image/gif', test: (b) => b.subarray(0, 4).toString('latin1') === 'GIF8' },
  { ext: 'webp', mime: 'image/webp', test: (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP' },
  { ext: 'bmp', mime: 'image/bmp', test: (b) => b.subarray(0, 2).toString('latin1') === 'BM' },
  { ext: 'ico', mime: 'image/vnd.microsoft.icon', test: (b) => b[0] === 0 && b[1] === 0 && b[2] === 1 && b[3] === 0 },
];

const FORMAT_MESSAGE = 'file format is not supported. Please try one of the following supported formats: png, jpg, jpeg, gif, bmp, tiff, ico or webp';

export function avatarDir(app: AppContext, groupId: number): string {
  return join(app.config.dataDir, 'uploads', 'group', 'avatar', String(groupId));
}

/** Checks an uploaded file (magic bytes, size); returns the stored file name. */
export function checkAvatar(data: Buffer): { ext: string; name: string } {
  if (data.length > AVATAR_MAX_BYTES) throw validationError({ avatar: ['is too big (should be at most 200 KiB)'] });
  const t = TYPES.find((x) => data.length >= 12 && x.test(data));
  if (!t) throw validationError({ avatar: [FORMAT_MESSAGE] });
  return { ext: t.ext, name: `avatar.${t.ext}` };
}

/** Writes the file (outside any transaction); replaces a previous avatar. */
export async function storeAvatar(app: AppContext, groupId: number, data: Buffer, name: string): Promise<void> {
  const dir = avatarDir(app, groupId);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, name), data);
}

export async function removeAvatar(app: AppContext, groupId: number): Promise<void> {
  await rm(avatarDir(app, groupId), { recursive: true, force: true });
}

export async function readAvatar(app: AppContext, groupId: number, name: string): Promise<{ data: Buffer; mime: string } | null> {
  if (!/^avatar\.[a-z]+$/.test(name)) return null;
  try {
    const data = await readFile(join(avatarDir(app, groupId), name));
    const ext = name.split('.').pop()!;
    return { data, mime: TYPES.find((t) => t.ext === ext)?.mime ?? 'application/octet-stream' };
  } catch {
    return null;
  }
}

/** The raw value of a multipart file field, when the request carried one. */
export function uploadedFile(v: unknown): Buffer | null {
  if (Buffer.isBuffer(v)) return v;
  return null;
}
