/**
 * @module shell-literal
 * Values that the server embeds into the install script become single-quoted shell words, the
 * only shell quoting in which nothing is special but the quote itself.
 */

/** Control characters (newline, NUL, escape, ...) have no business in an embedded value. */
const CONTROL = /\p{Cc}/u;

/** Quotes `value` as one shell word; a `'` inside becomes `'\''`. Throws on control characters. */
export function shellLiteral(value: string): string {
  if (CONTROL.test(value)) {
    throw new RangeError("a value embedded in a shell script must not contain control characters");
  }
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
