/**
 * @module notifications/chat-escape
 * Text an agent chose (host names, paths, error messages) shown in Slack and Discord messages as
 * the characters it is, never as markup: no bold, links, mentions or autolinked URLs from a host.
 * Fleetback's own link is added by the caller after escaping.
 *
 * A bare `scheme://` is broken with a zero-width space after the colon (`https:\u200B//…`): both
 * clients link only an unbroken scheme, and the reader still sees the address. Wrapping values in
 * code spans would also stop links, but a backtick in the value could close the span, and a whole
 * error message in code reads worse than text.
 */

const ZWSP = "\u200B";

function breakAutolinks(text: string): string {
  return text.replace(/:\/\//g, `:${ZWSP}//`);
}

/** Slack's three entities: enough for Fleetback's own `<url|text>` link. */
export function slackEntities(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

const WORD = /[\p{L}\p{N}]/u;

/**
 * Slack reads `<!channel>`, `<@U1>` and `<url|text>` in mrkdwn: the entities stop data opening
 * such a tag. mrkdwn has no escape character; it formats `*`, `_` and `~` only at a word boundary,
 * so a zero-width space on each side makes such a character part of a word. One already inside a
 * word (`backup_failed`) is left alone, so names read and search as they are; a backtick always
 * gets the spaces.
 */
export function slackEscape(text: string): string {
  return breakAutolinks(slackEntities(text)).replace(/[*_~`]/g, (char, at: number, whole: string) => {
    const inWord = WORD.test(whole[at - 1] ?? "") && WORD.test(whole[at + 1] ?? "");
    return char !== "`" && inWord ? char : `${ZWSP}${char}${ZWSP}`;
  });
}

/**
 * Discord shows a backslash-escaped punctuation character as it is: markdown (`*`, `_`, `~`,
 * `` ` ``, `|` spoilers, `#` headings, `-` lists, `>` quotes), `[text](url)` links and `<@id>`
 * mentions all lose their meaning. Pings are also off through allowed_mentions.
 */
export function discordEscape(text: string): string {
  return breakAutolinks(text.replace(/[\\*_~`|<>#\-[\]()@]/g, (char) => `\\${char}`));
}
