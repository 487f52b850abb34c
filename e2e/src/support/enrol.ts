/**
 * @module support/enrol
 * A host enrolled the way an operator does it: mint a token with a rest-server repository, add
 * the repository user with the snippet the server hands back, run `fleetback-agent enroll`. Then
 * wait until the running agent is online and has initialised its repository.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentDirs, makeAgentDirs, runAgent } from "./agent-process.js";
import type { Api } from "./api.js";
import { eventually } from "./eventually.js";
import type { RestServer } from "./rest-server.js";
import { RESTIC, type ResticVersion } from "./tools.js";

export interface EnrolledHost {
  hostId: string;
  dirs: AgentDirs;
  /** The agent's environment: which restic it runs. */
  env: Record<string, string>;
  /** The repository password the server generated (shown once at enrolment): RESTIC_PASSWORD. */
  password: string;
  /**
   * The rest-server login of the user, generated apart from the repository password (issue 31):
   * the htpasswd snippet holds it, and a restic URL's `user:login@` part takes it. A local
   * repository has none: then the repository password.
   */
  loginPassword: string;
}

export async function enrolHost(options: {
  api: Api;
  rest: RestServer;
  restic: ResticVersion;
  /** The rest-server user, also the repository's path. */
  user: string;
  /** A local repository path instead of the rest-server one. */
  localRepository?: string;
  /** Config and state dirs (default: new ones under the temp dir). */
  dirs?: AgentDirs;
  /** The restic binary (default: the fetched one of `restic`). */
  resticPath?: string;
  /**
   * A repository someone made before (adopted): its password, which is also the rest-server
   * user's login the caller already added. No password is generated and no snippet is run.
   */
  existingPassword?: string;
  /** Labels the token gives the host (issue 37). */
  labels?: Record<string, string>;
}): Promise<EnrolledHost> {
  const { api, rest, restic, user } = options;
  const repository =
    options.localRepository === undefined
      ? { url: `rest:${rest.url}/${user}/`, username: user }
      : { url: options.localRepository };
  if (options.existingPassword !== undefined) {
    Object.assign(repository, { password: options.existingPassword });
  }
  const minted = await api.send<{
    token: string;
    htpasswd_snippet: string;
    generated_password: string;
    generated_login_password?: string;
  }>("POST", "/api/enrollment-tokens", { repository, ...(options.labels ? { labels: options.labels } : {}) });
  if (minted.status !== 201) {
    throw new Error(`enrolment token: ${minted.status} ${JSON.stringify(minted.body)}`);
  }
  if (options.localRepository === undefined && options.existingPassword === undefined) {
    await rest.runHtpasswdSnippet(minted.body.htpasswd_snippet);
  }
  const dirs = options.dirs ?? (await makeAgentDirs());
  const env = { FLEETBACK_RESTIC: options.resticPath ?? RESTIC[restic] };
  const enrolled = await runAgent(
    ["enroll", "--server", api.baseUrl, "--token", minted.body.token],
    dirs,
    env,
  );
  if (enrolled.code !== 0) {
    throw new Error(`agent enroll exited with ${enrolled.code}:\n${enrolled.output}`);
  }
  const { host_id } = JSON.parse(readFileSync(join(dirs.configDir, "agent.json"), "utf8")) as {
    host_id: string;
  };
  const password = options.existingPassword ?? minted.body.generated_password;
  return {
    hostId: host_id,
    dirs,
    env,
    password,
    loginPassword: minted.body.generated_login_password ?? password,
  };
}

/** Waits until the host's agent is connected and its repository is initialised. */
export async function waitHostReady(api: Api, hostId: string): Promise<void> {
  await eventually(
    async () => {
      const { host } = await api.get<{ host: { status: string; repository_init: { state: string } } }>(
        `/api/hosts/${hostId}`,
      );
      return host.status === "online" && host.repository_init.state === "initialised";
    },
    { what: "host online and initialised", timeoutMs: 90_000 },
  );
}
