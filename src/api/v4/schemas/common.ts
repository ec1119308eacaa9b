// Building blocks of the response schemas (JSON Schema through TypeBox). Every object allows
// properties it does not list (additionalProperties: true), so a new field never fails a check,
// but every field a presenter emits is listed with its type; `nullable` marks the ones that may be
// null. Required fields are those the presenter always emits; fields emitted only in some cases
// (caller's role, plan, query options) are wrapped in `optional`.
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';

export const Str = () => Type.String();
export const Int = () => Type.Integer();
export const Num = () => Type.Number();
export const Bool = () => Type.Boolean();
export const Null = () => Type.Null();
export const Any = () => Type.Unknown();

export function nullable<T extends TSchema>(t: T) {
  return Type.Union([t, Type.Null()]);
}

export const NStr = () => nullable(Str());
export const NInt = () => nullable(Int());
export const NBool = () => nullable(Bool());

/** One of the given strings. */
export function oneOfStrings(values: readonly string[]) {
  return Type.Unsafe<string>({ type: 'string', enum: [...values] });
}

/** An object that lists its fields and accepts unlisted ones. */
export function obj<P extends TProperties>(props: P, opts: { title?: string } = {}) {
  return Type.Object(props, { additionalProperties: true, ...opts });
}

/** Marks every field of `props` as optional (present only in some cases). */
export function optional<P extends TProperties>(props: P): TProperties {
  const out: TProperties = {};
  for (const [k, v] of Object.entries(props)) out[k] = Type.Optional(v);
  return out;
}

/** An object with string keys and values of one type (for example commit trailers). */
export function dict<T extends TSchema>(value: T) {
  return Type.Record(Type.String(), value);
}

export const Arr = <T extends TSchema>(t: T) => Type.Array(t);

/**
 * `then` when the body has every field of `when`, `otherwise` when it does not: lists whose entries
 * change with a query option (simple=true, view=simple) without an anyOf that would let the
 * smaller entity accept a broken larger one.
 */
export function ifHas(when: string[], then: TSchema, otherwise: TSchema) {
  return Type.Unsafe<unknown>({ if: { type: 'object', required: when }, then, else: otherwise });
}

/** `{ "message": "202 Accepted" }` and the like. */
export const Message = obj({ message: Str() }, { title: 'Message' });

/** An ISO 8601 date-time with its offset (`2024-01-02T03:04:05.000Z`, `…+01:00`). */
const TIME = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$';
/** A calendar day (`2024-01-02`): expiry dates, due dates. */
const DAY = '^\\d{4}-\\d{2}-\\d{2}$';

export const Time = () => Type.String({ pattern: TIME });
export const NTime = () => nullable(Time());
export const Day = () => Type.String({ pattern: DAY });
export const NDay = () => nullable(Day());
