// Entities::WikiPageBasic, Entities::WikiPage and Entities::WikiAttachment (project wikis).
import { Any, NInt, Str, dict, ifHas, obj } from './common.js';

export const WikiPageBasic = obj({ format: Str(), slug: Str(), title: Str(), wiki_page_meta_id: NInt() }, { title: 'WikiPageBasic' });

export const WikiPage = obj(
  { format: Str(), slug: Str(), title: Str(), wiki_page_meta_id: NInt(), content: Str(), encoding: Str(), front_matter: dict(Any()) },
  { title: 'WikiPage' },
);

/** A list entry: the full page with `with_content`, else the basic one. */
export const WikiPageListEntry = ifHas(['content'], WikiPage, WikiPageBasic);

export const WikiAttachment = obj(
  { file_name: Str(), file_path: Str(), branch: Str(), link: obj({ url: Str(), markdown: Str() }) },
  { title: 'WikiAttachment' },
);

