// Presenters named after GitLab's Entities::ProtectedBranch, ProtectedTag and ProtectedRefAccess
// (with the fields GitLab's EE edition adds, as GitLab.com answers). Field order follows GitLab.
import { LEVEL_DESCRIPTIONS, type AccessLevelRow, type ProtectedRefRule, type RefAction } from '../../../services/repository/protected-refs.js';

function presentAccess(l: AccessLevelRow) {
  return {
    id: l.id,
    access_level: l.access_level,
    access_level_description: LEVEL_DESCRIPTIONS[l.access_level] ?? String(l.access_level),
    user_id: null,
    group_id: null,
  };
}

function levelsOf(rule: ProtectedRefRule, action: RefAction) {
  return rule.levels.filter((l) => l.action === action).map(presentAccess);
}

export function presentProtectedBranch(rule: ProtectedRefRule) {
  return {
    id: rule.id,
    name: rule.name,
    push_access_levels: levelsOf(rule, 'push'),
    merge_access_levels: levelsOf(rule, 'merge'),
    allow_force_push: rule.allowForcePush,
    unprotect_access_levels: levelsOf(rule, 'unprotect'),
    code_owner_approval_required: rule.codeOwnerApprovalRequired,
    inherited: false,
  };
}

export function presentProtectedTag(rule: ProtectedRefRule) {
  return {
    name: rule.name,
    create_access_levels: levelsOf(rule, 'create'),
  };
}
