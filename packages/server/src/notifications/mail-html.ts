/**
 * @module notifications/mail-html
 * The HTML part of a mail that says more than an alert (a digest, a scheduled report): the
 * verdict as a heading coloured by whether all is well, lead paragraphs, a list and one link.
 * Inline styles only (mail clients drop style sheets); every text is escaped.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function mailHtml(page: {
  title: string;
  allWell: boolean;
  paragraphs: readonly string[];
  items: readonly string[];
  link: string;
  linkText: string;
}): string {
  return [
    `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(page.title)}</title></head>`,
    `<body style="font-family:system-ui,sans-serif;line-height:1.4;max-width:44em">`,
    `<h1 style="font-size:1.15em;color:${page.allWell ? "#14632d" : "#8a1c1c"}">${escapeHtml(page.title)}</h1>`,
    ...page.paragraphs.map((text) => `<p>${escapeHtml(text)}</p>`),
    `<ul>${page.items.map((text) => `<li>${escapeHtml(text)}</li>`).join("")}</ul>`,
    `<p><a href="${escapeHtml(page.link)}">${escapeHtml(page.linkText)}</a></p>`,
    `</body></html>`,
  ].join("");
}
