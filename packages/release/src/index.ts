/**
 * @module @fleetback/release
 * What `pnpm release` writes: the agent bundle, the single-executable agent (Node SEA) for the
 * running platform, and the manifest the server's `import-release` reads.
 */
export { type AgentPackage, findAgentPackage, isReleaseVersion, releaseVersion } from "./agent-package.js";
export {
  type BundleArtefactOptions,
  bundleFileName,
  readBannerVersion,
  writeBundleArtefact,
} from "./bundle-artefact.js";
export {
  type BundleArtefact,
  MANIFEST_FILE,
  type ReleaseArtefact,
  type ReleaseManifest,
  type SeaArtefact,
  sha256File,
  writeManifest,
} from "./manifest.js";
export { buildRelease, type Release, type ReleaseOptions } from "./release.js";
export {
  SEA_SENTINEL_FUSE,
  type SeaExecutableOptions,
  type SeaTarget,
  seaFileName,
  writeSeaArtefact,
} from "./sea-executable.js";
export { buildSeaScript, type SeaScriptOptions, wrapTopLevelAwait } from "./sea-script.js";
