/**
 * @module present-fields
 * The update a request or report asks for when an absent field keeps what is stored: each field
 * present (not undefined), under the name of the column it sets. A field can only be given a
 * column whose type takes its value.
 */

type ColumnFor<V, R> = { [C in keyof R]-?: Exclude<V, undefined> extends R[C] ? C : never }[keyof R];

export function presentFields<B extends object, R extends object>(
  body: B,
  columns: { [F in keyof B]?: ColumnFor<B[F], R> },
): Partial<R> {
  const patch: Partial<R> = {};
  for (const field of Object.keys(columns) as Array<keyof B>) {
    const column = columns[field];
    const value = body[field];
    if (column !== undefined && value !== undefined) {
      patch[column] = value as unknown as R[typeof column];
    }
  }
  return patch;
}
