/**
 * @module restore/restore-wizard
 * The restore wizard's view model: what its page and its tree partial show, computed from the
 * host, the wizard session and the operator's input, with no HTTP in it. A wizard session id
 * (random, carried in the URL and a hidden field) scopes the tree cache together with the user, so
 * one operator's cached listings are never served to another.
 */
import { type Database, type Host, hosts, type Snapshot } from "@fleetback/db";
import {
  DOWNLOAD_PROTOCOL_VERSION,
  type DumpArchiveFormat,
  TREE_PAGING_PROTOCOL_VERSION,
} from "@fleetback/protocol";
import { asc, ne } from "drizzle-orm";
import type { FieldProblem } from "../http/validate.js";
import type { AgentHub } from "../hub/types.js";
import type { Ids } from "../ids.js";
import { cleanPaths, DEFAULT_RESTORE_TARGET, type RestoreInput } from "./restore-request.js";
import { searchSnapshots } from "./snapshot-search.js";
import type { TreeListing } from "./tree-listing.js";

export const WIZARD_SESSION_PATTERN = "^[A-Za-z0-9_-]{16,64}$";

export function newWizardSession(ids: Pick<Ids, "randomBytes">): string {
  return ids.randomBytes(18).toString("base64url");
}

export interface WizardState {
  host: Host;
  session: string;
  snapshot?: Snapshot | undefined;
  q?: string;
  input?: RestoreInput;
  problems?: FieldProblem[];
  notice?: string;
  review?: boolean;
  /** Issue 38.3: paths chosen before the wizard opened (a version found by search). */
  paths?: readonly string[];
}

/** The wizard's form fields as posted, before any check: repeated `paths` arrive as an array. */
export interface WizardForm {
  snapshot_id?: string | undefined;
  paths?: string | string[] | undefined;
  in_place?: "true" | "false" | undefined;
  target_dir?: string | undefined;
  confirm_hostname?: string | undefined;
  /** Issue 38: the host the snapshot is restored onto, when it is not the snapshot's own. */
  onto_host_id?: string | undefined;
}

export function treeUrl(
  hostId: string,
  session: string,
  snapshotId: string,
  path: string,
  nested: boolean,
  after?: string,
): string {
  const query = new URLSearchParams({ session, snapshot_id: snapshotId, path });
  if (nested) {
    query.set("nested", "1");
  }
  if (after !== undefined) {
    query.set("after", after);
  }
  return `/hosts/${hostId}/restore/tree?${query.toString()}`;
}

/** The download link of one file (no archive) or folder (as `archive`); restore/download.ts serves it. */
export function downloadUrl(
  hostId: string,
  snapshotId: string,
  path: string,
  archive?: DumpArchiveFormat,
): string {
  const query = new URLSearchParams({ path });
  if (archive !== undefined) {
    query.set("archive", archive);
  }
  return `/hosts/${hostId}/snapshots/${snapshotId}/download?${query.toString()}`;
}

/**
 * An agent before protocol 4 ignores `after` and would send the first page again, which the
 * wizard would append as if it were new. It never sends `next_after`, so only a hand-made URL
 * gets here.
 */
export function pagingRefused(host: Host): TreeListing | undefined {
  if ((host.protocolVersion ?? 0) >= TREE_PAGING_PROTOCOL_VERSION) {
    return undefined;
  }
  return {
    ok: false,
    reason: "agent_error",
    message: `after: the agent of ${host.name} is too old to list a folder in pages; upgrade it`,
  };
}

/** `/`, then one crumb per segment of `path`. */
function crumbsOf(path: string): Array<{ name: string; path: string }> {
  const crumbs = [{ name: "/", path: "/" }];
  let current = "";
  for (const segment of path.split("/").filter((part) => part !== "")) {
    current = `${current}/${segment}`;
    crumbs.push({ name: segment, path: current });
  }
  return crumbs;
}

function listOf(value: string | string[] | undefined): string[] {
  if (value === undefined) {
    return [];
  }
  return Array.isArray(value) ? value : [value];
}

/** The operator's input as the wizard keeps it; an empty target means the default unless in place. */
export function wizardInput(form: WizardForm): RestoreInput {
  const inPlace = form.in_place === "true";
  return {
    snapshotId: form.snapshot_id ?? "",
    paths: cleanPaths(listOf(form.paths)),
    inPlace,
    targetDir: form.target_dir ?? (inPlace ? "" : DEFAULT_RESTORE_TARGET),
    confirmHostname: form.confirm_hostname ?? "",
    ontoHostId: form.onto_host_id?.trim() ?? "",
  };
}

/**
 * Where the tree opens: the snapshot's one backed-up path, or the deepest folder that holds all
 * of them, so the operator starts at what was backed up rather than at `/` (issue 17). Paths that
 * are not slash-rooted (a Windows drive) leave it at `/`; the breadcrumbs lead up from there.
 */
export function openingPath(paths: readonly string[]): string {
  const rooted = paths.filter((path) => path.startsWith("/"));
  if (rooted.length === 0 || rooted.length !== paths.length) {
    return "/";
  }
  const split = rooted.map((path) => path.split("/").filter((part) => part !== "" && part !== "."));
  if (split.some((parts) => parts.includes(".."))) {
    return "/";
  }
  const [first = [], ...rest] = split;
  let common = first.length;
  for (const parts of rest) {
    let same = 0;
    while (same < common && same < parts.length && parts[same] === first[same]) {
      same++;
    }
    common = same;
  }
  return `/${first.slice(0, common).join("/")}`;
}

/** Everything pages/restore.njk shows. */
export async function wizardView(
  deps: { db: Database; hub: Pick<AgentHub, "isOnline"> },
  state: WizardState,
) {
  const { host, session, snapshot } = state;
  const q = state.q ?? "";
  const input: RestoreInput = state.input ?? {
    snapshotId: snapshot?.id ?? "",
    paths: cleanPaths([...(state.paths ?? [])]),
    inPlace: false,
    targetDir: DEFAULT_RESTORE_TARGET,
    confirmHostname: "",
  };
  const problems = state.problems ?? [];
  const pickList = snapshot && q === "" ? [] : await searchSnapshots(deps.db, host.id, q);
  // Issue 38: any other host may be restored onto; restore-source.ts decides which may at submit.
  const ontoHosts = await deps.db
    .select({ id: hosts.id, name: hosts.name })
    .from(hosts)
    .where(ne(hosts.id, host.id))
    .orderBy(asc(hosts.name));
  const ontoHostId = input.ontoHostId ?? "";
  const onto = ontoHosts.find((other) => other.id === ontoHostId);
  return {
    title: `${host.name}: restore`,
    host,
    connected: deps.hub.isOnline(host.id),
    session,
    q,
    snapshot,
    pickList,
    input,
    selectedPaths: cleanPaths(input.paths),
    ontoHosts,
    ontoHostId: onto === undefined ? "" : onto.id,
    ontoName: onto?.name ?? host.name,
    problems,
    fieldErrors: Object.fromEntries(problems.map((problem) => [problem.field, problem.message])),
    notice: state.notice,
    review: state.review === true,
    showForm: snapshot !== undefined || state.input !== undefined,
    defaultTarget: DEFAULT_RESTORE_TARGET,
    rootTreeUrl: snapshot
      ? treeUrl(host.id, session, snapshot.id, openingPath(snapshot.paths), false)
      : undefined,
    jumpTo: snapshot
      ? snapshot.paths.map((path) => ({ path, url: treeUrl(host.id, session, snapshot.id, path, false) }))
      : [],
  };
}

export interface TreeRequest {
  host: Host;
  session: string;
  snapshotId: string;
  path: string;
  nested: boolean;
  after?: string | undefined;
}

/**
 * What the tree partial shows of one listing. With `after` it is only the rows that follow the
 * "Show more" row they replace (an error takes that row's place); without, the whole folder view.
 */
export function treeView(request: TreeRequest, listing: TreeListing) {
  const { host, session, snapshotId, path, nested, after } = request;
  const urlOf = (target: string, nestedUrl: boolean, from?: string) =>
    treeUrl(host.id, session, snapshotId, target, nestedUrl, from);
  // Operators only reach the tree; links only for an agent that answers dump.request (protocol 7).
  const downloads = (host.protocolVersion ?? 0) >= DOWNLOAD_PROTOCOL_VERSION;
  const downloadsOf = (entry: { path: string; type: string }) => {
    if (!downloads || (entry.type !== "file" && entry.type !== "dir")) {
      return {};
    }
    return entry.type === "file"
      ? { downloadUrl: downloadUrl(host.id, snapshotId, entry.path) }
      : {
          tarUrl: downloadUrl(host.id, snapshotId, entry.path, "tar"),
          zipUrl: downloadUrl(host.id, snapshotId, entry.path, "zip"),
        };
  };
  const page = {
    path,
    selfUrl: urlOf(path, nested, after),
    moreUrl: listing.ok && listing.nextAfter ? urlOf(path, nested, listing.nextAfter) : undefined,
    nextAfter: listing.ok ? listing.nextAfter : undefined,
    entries: listing.ok
      ? listing.entries.map((entry) => ({
          ...entry,
          url: entry.type === "dir" ? urlOf(entry.path, true) : undefined,
          ...downloadsOf(entry),
        }))
      : [],
  };
  if (after !== undefined) {
    return {
      template: "partials/restore-tree-rows.njk",
      view: { ...page, appended: true, pageError: listing.ok ? undefined : listing.message },
    };
  }
  return {
    template: "partials/restore-tree.njk",
    view: {
      ...page,
      nested,
      crumbs: crumbsOf(path).map((crumb) => ({ ...crumb, url: urlOf(crumb.path, false) })),
      error: listing.ok ? undefined : listing.message,
      cached: listing.ok ? listing.cached : false,
    },
  };
}
