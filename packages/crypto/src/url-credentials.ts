/**
 * @module Repository credentials in restic URLs. Credentials are stored apart from the URL and
 * merged in only when restic is spawned (packages/protocol/PROTOCOL.md, "Credentials and caps"),
 * because restic reads
 * rest-server and S3-compatible credentials from the URL's userinfo. Every surface that prints a
 * URL goes through `redactUrl`, which shows `user:***@` like restic does itself.
 *
 * Only forms with an HTTP(S) host part take credentials: `rest:http(s)://…` and `s3:http(s)://…`.
 * Everything else is returned untouched: `sftp:` (ssh does the authentication), local paths, and
 * backends configured through their own variables (`b2:`, `azure:`, `gs:`, `swift:`, `rclone:`,
 * `s3:host/bucket` without a scheme, `rest:http+unix://`).
 */

// Case-sensitive like restic's own prefix checks: "REST:http://…" is a local path to restic.
const HOST_FORM = /^(rest|s3):(https?):\/\/([^/?#]*)([\s\S]*)$/;
const AUTHORITY_AFTER_SCHEME = /(?<=:\/\/)[^\s/?#]*/g;

interface HostForm {
  /** `rest:http://`, as written. */
  head: string;
  userinfo: string | undefined;
  host: string;
  /** Path, query and fragment, as written. */
  tail: string;
}

export function acceptsUrlCredentials(url: string): boolean {
  return splitHostForm(url) !== undefined;
}

/**
 * Puts `user:password@` in front of the host part, each percent-encoded with encodeURIComponent
 * semantics so `@ : / ? # %` and non-ASCII characters survive; restic (Go's net/url) decodes them.
 *
 * Field by field, a supplied non-empty value replaces what the URL already holds and an omitted
 * or empty one keeps it: `rest:http://bob:old@h/` with username "alice" becomes
 * `rest:http://alice:old@h/`. Forms without a host part come back unchanged.
 * Throws URIError for strings that are not well-formed Unicode (lone surrogates).
 */
export function mergeUrlCredentials(url: string, username?: string, password?: string): string {
  const form = splitHostForm(url);
  if (!form) {
    return url;
  }
  const [existingUser, existingPassword] = splitUserinfo(form.userinfo);
  const user = username ? encodeURIComponent(username) : existingUser;
  const secret = password ? encodeURIComponent(password) : existingPassword;
  if (user === undefined && secret === undefined) {
    return url;
  }
  const userinfo = secret === undefined ? (user ?? "") : `${user ?? ""}:${secret}`;
  return `${form.head}${userinfo}@${form.host}${form.tail}`;
}

/**
 * Replaces the password of every `scheme://user:password@` in `text` (a URL or a whole log line)
 * with `***`. The userinfo ends at the last `@` before the host, as in the WHATWG URL parser, so
 * raw `@` and `:` inside a password are covered too; raw `/`, `?`, `#` or whitespace in a password
 * cannot be told apart from a path and are not, which merged URLs never contain.
 */
export function redactUrl(text: string): string {
  return text.replace(AUTHORITY_AFTER_SCHEME, (authority) => {
    const at = authority.lastIndexOf("@");
    const colon = authority.indexOf(":");
    if (at === -1 || colon === -1 || colon > at || colon === at - 1) {
      return authority;
    }
    return `${authority.slice(0, colon)}:***${authority.slice(at)}`;
  });
}

/**
 * The repository a URL names, without any userinfo: `rest:https://u:p@h/x` and `rest:https://h/x`
 * are one repository. Forms without a host part come back unchanged.
 */
export function repositoryLocation(url: string): string {
  const form = splitHostForm(url);
  return form === undefined ? url : `${form.head}${form.host}${form.tail}`;
}

function splitHostForm(url: string): HostForm | undefined {
  const match = HOST_FORM.exec(url);
  if (!match) {
    return undefined;
  }
  const [, backend = "", scheme = "", authority = "", tail = ""] = match;
  const at = authority.lastIndexOf("@");
  const host = authority.slice(at + 1);
  if (host === "") {
    return undefined;
  }
  return {
    head: `${backend}:${scheme}://`,
    userinfo: at === -1 ? undefined : authority.slice(0, at),
    host,
    tail,
  };
}

function splitUserinfo(userinfo: string | undefined): [string | undefined, string | undefined] {
  if (userinfo === undefined) {
    return [undefined, undefined];
  }
  const colon = userinfo.indexOf(":");
  if (colon === -1) {
    return [userinfo || undefined, undefined];
  }
  return [userinfo.slice(0, colon) || undefined, userinfo.slice(colon + 1)];
}
