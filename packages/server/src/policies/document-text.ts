/**
 * @module policies/document-text
 * The text form of a policy or a fleet document: YAML (JSON is YAML too) for people and git,
 * JSON when a file says so. One reader for the policy page's editor and the CLI, so both take and
 * refuse the same texts.
 */
import { parse as parseYaml, stringify as toYaml } from "yaml";

export type DocumentFormat = "yaml" | "json";

/** Aliases could expand a small text into a huge document; 100 is plenty for a policy. */
const MAX_ALIASES = 100;

/** Parses `text`; throws an Error whose message names the format and where the text broke. */
export function parseDocumentText(text: string, format: DocumentFormat = "yaml"): unknown {
  try {
    return format === "json" ? JSON.parse(text) : parseYaml(text, { maxAliasCount: MAX_ALIASES });
  } catch (err) {
    const why = (err instanceof Error ? (err.message.split("\n")[0] ?? "") : String(err)).replace(/:$/, "");
    throw new Error(`not ${format === "json" ? "JSON" : "YAML"}: ${why}`);
  }
}

export function documentText(value: unknown, format: DocumentFormat = "yaml"): string {
  return format === "json" ? `${JSON.stringify(value, null, 2)}\n` : toYaml(value, { lineWidth: 0 });
}
