// Entities::ProjectUpload and Entities::MarkdownUploadAdmin (project Markdown uploads).
import { Int, Str, Time, nullable, obj } from './common.js';

export const ProjectUpload = obj({ id: Int(), alt: Str(), url: Str(), full_path: Str(), markdown: Str() }, { title: 'ProjectUpload' });

export const MarkdownUploadAdmin = obj(
  { id: Int(), size: Int(), filename: Str(), created_at: Time(), uploaded_by: nullable(obj({ id: Int(), username: Str(), name: Str() })) },
  { title: 'MarkdownUploadAdmin' },
);
