/**
 * @module Scrubbing known secrets out of text. The agent runs every restic output line through a
 * scrubber before it leaves the host, so a password that restic, a hook or a server error echoes
 * back never reaches logs or the server. Besides the raw secret, every spelling in which any of its
 * characters are percent-encoded (upper- or lowercase hex, `+` for a space) is caught, so a URL
 * matches however encodeURIComponent, the WHATWG parser or Go's net/url escaped it.
 */

/** Shorter secrets are ignored: replacing every "abc" in a log would make the log unreadable. */
export const MIN_SECRET_LENGTH = 4;
export const SCRUBBED = "***";

export type Scrubber = (text: string) => string;

/**
 * Builds the matcher once; call the result on every line. Empty, missing and too-short entries
 * are skipped, so optional credential fields can be passed as they are.
 */
export function createScrubber(secrets: Iterable<string | null | undefined>): Scrubber {
  const usable = [...new Set(secrets)].filter(
    (secret): secret is string => typeof secret === "string" && [...secret].length >= MIN_SECRET_LENGTH,
  );
  if (usable.length === 0) {
    return (text) => text;
  }
  // Longest first, so a secret that contains another is replaced whole, not around the shorter one.
  usable.sort((a, b) => b.length - a.length);
  const pattern = new RegExp(usable.map(anySpelling).join("|"), "g");
  return (text) => text.replace(pattern, SCRUBBED);
}

export function scrubSecrets(text: string, secrets: Iterable<string | null | undefined>): string {
  return createScrubber(secrets)(text);
}

function anySpelling(secret: string): string {
  return [...secret].map(characterSpellings).join("");
}

function characterSpellings(character: string): string {
  const spellings = [escapeRegExp(character)];
  const encoded = percentEncode(character);
  if (encoded) {
    spellings.push(encoded.replace(/[A-F]/g, (digit) => `[${digit}${digit.toLowerCase()}]`));
  }
  if (character === " ") {
    spellings.push("\\+");
  }
  return `(?:${spellings.join("|")})`;
}

/** Every UTF-8 byte as `%XY`; undefined for a lone surrogate, which has no UTF-8 form. */
function percentEncode(character: string): string | undefined {
  if (/^[\uD800-\uDFFF]$/.test(character)) {
    return undefined;
  }
  return [...new TextEncoder().encode(character)]
    .map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`)
    .join("");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}
