/**
 * @module Injectable randomness. Every function here that draws random bytes takes an optional
 * `random` so tests can be deterministic; production uses the operating system's CSPRNG.
 */

/** Returns `length` fresh random bytes. */
export type RandomBytes = (length: number) => Uint8Array;

export const systemRandom: RandomBytes = (length) =>
  globalThis.crypto.getRandomValues(new Uint8Array(length));
