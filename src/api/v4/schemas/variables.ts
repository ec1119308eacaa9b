// Response schema of the CI/CD variables APIs (Entities::Ci::Variable).
import { Type } from '@sinclair/typebox';
import { Bool, NStr, Str, obj, oneOfStrings } from './common.js';

/** In the entity's order; project and group variables carry `hidden` and `environment_scope`, instance variables do not. A hidden value is null. */
export const CiVariable = obj({
  variable_type: oneOfStrings(['env_var', 'file']),
  key: Str(),
  value: NStr(),
  hidden: Type.Optional(Bool()),
  protected: Bool(),
  masked: Bool(),
  raw: Bool(),
  environment_scope: Type.Optional(Str()),
  description: NStr(),
});
