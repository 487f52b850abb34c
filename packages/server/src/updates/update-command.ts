/**
 * @module updates/update-command
 * The `command.update` for one host: the artefact of the kind the host runs (a bundle for a
 * node-run agent, the single executable of its os-arch for a SEA agent), where to fetch it, and
 * its hash and release-key signature. A SEA host whose platform has no stored artefact gets no
 * command; the error says which artefact is missing so the operator can import it.
 */
import type { HostAgentKind } from "@fleetback/db";
import type { CommandUpdate } from "@fleetback/protocol";
import type { BundleStore } from "../agent-artifacts/bundle-store.js";
import type { Config } from "../config.js";

export interface UpdateTarget {
  agentKind: HostAgentKind;
  os: string;
  arch: string;
}

export type UpdateCommandResult = { ok: true; payload: CommandUpdate } | { ok: false; error: string };

export function agentArtefactUrl(baseUrl: string, version: string, platform?: { os: string; arch: string }) {
  const base = `${baseUrl}/install/agent/${encodeURIComponent(version)}`;
  return platform ? `${base}/${encodeURIComponent(`${platform.os}-${platform.arch}`)}` : base;
}

export async function buildUpdateCommand(
  deps: { agentBundles: BundleStore; config: Pick<Config, "baseUrl"> },
  target: UpdateTarget,
  version: string,
): Promise<UpdateCommandResult> {
  if (target.agentKind === "sea") {
    const info = await deps.agentBundles.seaInfo(version, target.os, target.arch);
    if (!info) {
      return {
        ok: false,
        error: `no single-executable agent ${version} for ${target.os}-${target.arch} is stored (import a release that has sea-${target.os}-${target.arch})`,
      };
    }
    return {
      ok: true,
      payload: {
        version,
        url: agentArtefactUrl(deps.config.baseUrl, version, target),
        sha256: info.sha256,
        signature: info.signature,
      },
    };
  }
  const info = await deps.agentBundles.info(version);
  if (!info) {
    return { ok: false, error: `no agent bundle ${version} is stored` };
  }
  return {
    ok: true,
    payload: {
      version,
      url: agentArtefactUrl(deps.config.baseUrl, version),
      sha256: info.sha256,
      signature: info.signature,
    },
  };
}
