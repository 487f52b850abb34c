/** @module @fleetback/crypto: the server's and agent's cryptography and secret handling. */
export {
  ED25519_PUBLIC_KEY_BYTES,
  encodePublicKey,
  fingerprint,
  generateSigningKeyPair,
  type ParsePublicKeyResult,
  type PublicKeyProblem,
  parsePublicKey,
  type SigningKeyPair,
  sign,
  verifySignature,
} from "./ed25519.js";
export {
  KEY_FILE_BYTES,
  KeyFileError,
  type KeyFileProblem,
  type LoadedKey,
  type LoadOrCreateKeyOptions,
  loadOrCreateKey,
} from "./key-file.js";
export {
  type Argon2Params,
  type HashPasswordOptions,
  hashPassword,
  needsRehash,
  PASSWORD_HASH_PARAMS,
  TEST_PASSWORD_HASH_PARAMS,
  useTestPasswordHashParams,
  verifyPassword,
} from "./password-hash.js";
export { type RandomBytes, systemRandom } from "./random.js";
export { repositoryDigest } from "./repository-digest.js";
export { createScrubber, MIN_SECRET_LENGTH, SCRUBBED, type Scrubber, scrubSecrets } from "./scrub.js";
export {
  type OpenFailure,
  type OpenJsonResult,
  type OpenResult,
  type OpenStringResult,
  open,
  openJson,
  openString,
  SEAL_KEY_BYTES,
  SEAL_VERSION,
  type SealOptions,
  seal,
  sealJson,
  sealString,
} from "./seal.js";
export {
  deriveSigningKeyPair,
  type LoadedSigningKey,
  loadOrCreateSigningKey,
  signingKeyPairFromSeed,
} from "./signing-key-file.js";
export {
  constantTimeEqual,
  generateRepositoryPassword,
  hashToken,
  type RandomOptions,
  REPOSITORY_PASSWORD_BYTES,
  randomToken,
  TOKEN_PREFIXES,
  type TokenPrefix,
} from "./tokens.js";
export {
  acceptsUrlCredentials,
  mergeUrlCredentials,
  redactUrl,
  repositoryLocation,
} from "./url-credentials.js";
