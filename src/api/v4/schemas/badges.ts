// Entities::Badge and Entities::BasicBadgeDetails (project and group badges).
import { Int, NStr, Str, obj } from './common.js';

export const BasicBadgeDetails = obj({ name: NStr(), link_url: Str(), image_url: Str(), rendered_link_url: Str(), rendered_image_url: Str() }, { title: 'BasicBadgeDetails' });

export const Badge = obj(
  { name: NStr(), link_url: Str(), image_url: Str(), rendered_link_url: Str(), rendered_image_url: Str(), id: Int(), kind: Str() },
  { title: 'Badge' },
);
