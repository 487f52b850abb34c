/**
 * @module ulid
 * A small monotonic ULID generator for envelope ids: 48-bit millisecond time + 80 random bits,
 * Crockford base32. Within one millisecond (or if the clock steps back) the previous random part
 * is incremented, so ids from one generator always sort in creation order.
 */

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const MAX_TIME = 2 ** 48 - 1;
const RANDOM_BYTES = 10;

export interface UlidGeneratorOptions {
  /** Milliseconds since the epoch; injected so tests can pin the clock. */
  now?: () => number;
  /** Fills the array with random bytes. */
  fillRandom?: (bytes: Uint8Array) => void;
}

function encodeTime(time: number): string {
  let out = "";
  let rest = time;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET.charAt(rest % 32) + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

/** 80 bits as 16 five-bit groups, most significant first. */
function encodeRandom(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET.charAt((buffer >> bits) & 31);
    }
    buffer &= (1 << bits) - 1;
  }
  return out;
}

/** Adds one, big-endian; false when all 80 bits were already set. */
function increment(bytes: Uint8Array): boolean {
  for (let i = bytes.length - 1; i >= 0; i--) {
    const byte = bytes[i] ?? 0;
    if (byte < 255) {
      bytes[i] = byte + 1;
      return true;
    }
    bytes[i] = 0;
  }
  return false;
}

export function createUlidGenerator(options: UlidGeneratorOptions = {}): () => string {
  const now = options.now ?? Date.now;
  const fillRandom = options.fillRandom ?? ((bytes: Uint8Array) => crypto.getRandomValues(bytes));
  let lastTime = -1;
  const random = new Uint8Array(RANDOM_BYTES);
  return () => {
    const time = now();
    if (!Number.isInteger(time) || time < 0 || time > MAX_TIME) {
      throw new RangeError(`ULID time out of range: ${time}`);
    }
    if (time > lastTime) {
      lastTime = time;
      fillRandom(random);
    } else if (!increment(random)) {
      throw new RangeError("ULID random part overflowed within one millisecond");
    }
    return encodeTime(lastTime) + encodeRandom(random);
  };
}

let defaultGenerator: (() => string) | undefined;

/** A fresh envelope id from the process-wide monotonic generator. */
export function newMessageId(): string {
  defaultGenerator ??= createUlidGenerator();
  return defaultGenerator();
}
