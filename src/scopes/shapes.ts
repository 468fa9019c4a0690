/**
 * Shapes the scope definitions use, spelled out here since src/scopes/ imports no other folder:
 * the same as the event store's JSON (`JsonValue`), common/errors.ts's `FieldError` and
 * common/openapi.ts's `Schema`, so each is assignable to the other.
 */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };
export interface FieldError {
  readonly field: string;
  readonly message: string;
}
export type Schema = { readonly [keyword: string]: unknown };
