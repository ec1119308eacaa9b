// Protected branches and tags (migration 0016).
import type { Generated } from 'kysely';

export interface ProtectedRefsTable {
  id: Generated<number>;
  project_id: number;
  kind: 'branch' | 'tag';
  /** A ref name or a pattern with `*` wildcards (`release/*`). */
  name: string;
  allow_force_push: Generated<number>;
  code_owner_approval_required: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface ProtectedRefAccessLevelsTable {
  id: Generated<number>;
  protected_ref_id: number;
  action: 'push' | 'merge' | 'unprotect' | 'create';
  /** 0 no one, 30 Developers + Maintainers, 40 Maintainers, 60 administrators. */
  access_level: number;
  created_at: string;
}
