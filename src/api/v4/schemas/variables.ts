// Response schema of the CI/CD variables APIs (Entities::Ci::Variable).
import { Bool, NStr, Str, obj, oneOfStrings, optional } from './common.js';

/** Project and group variables carry `hidden` and `environment_scope`; instance variables do not. A hidden value is null. */
export const CiVariable = obj({
  variable_type: oneOfStrings(['env_var', 'file']),
  key: Str(),
  value: NStr(),
  ...optional({ hidden: Bool(), environment_scope: Str() }),
  protected: Bool(),
  masked: Bool(),
  raw: Bool(),
  description: NStr(),
});
