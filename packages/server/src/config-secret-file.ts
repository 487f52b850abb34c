/**
 * @module config-secret-file
 * A secret setting (the database URL, the bootstrap and metrics tokens, the OIDC client secret)
 * may come from a file named by `<NAME>_FILE` instead of `<NAME>` itself: a Docker or systemd
 * secret, which `docker inspect` and /proc/<pid>/environ do not show. Every message names the
 * variable and, for a file, its path; none ever holds what the file contains.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

export interface SecretSetting {
  value: string;
  /** The variable the value came from (`NAME` or `NAME_FILE`), for the messages that judge it. */
  variable: string;
}

/**
 * `env[name]`, or the contents of the file `env[name_FILE]` less one trailing newline (what
 * `echo` and editors add); undefined when neither is set or when a problem was pushed to `errors`.
 */
export function secretSetting(
  env: NodeJS.ProcessEnv,
  name: string,
  cwd: string,
  errors: string[],
): SecretSetting | undefined {
  const fileVariable = `${name}_FILE`;
  const inline = env[name] || undefined;
  const path = env[fileVariable] || undefined;
  if (path === undefined) {
    return inline === undefined ? undefined : { value: inline, variable: name };
  }
  if (inline !== undefined) {
    errors.push(`${name} and ${fileVariable}: set one, not both (both are set)`);
    return undefined;
  }
  let text: string;
  try {
    text = readFileSync(resolve(cwd, path), "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    errors.push(`${fileVariable}: cannot read ${path} (${code})`);
    return undefined;
  }
  const value = text.replace(/\r?\n$/, "");
  if (value === "") {
    errors.push(`${fileVariable}: ${path} is empty`);
    return undefined;
  }
  // A second line is a file written by mistake (two values, a comment): refused rather than
  // letting a token with a newline in it fail later in a way that names nothing.
  if (/[\r\n]/.test(value)) {
    errors.push(`${fileVariable}: ${path} must hold the value on one line`);
    return undefined;
  }
  return { value, variable: fileVariable };
}
