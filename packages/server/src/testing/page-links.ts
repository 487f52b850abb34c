/**
 * @module testing/page-links
 * The links a rendered page (or htmx fragment) offers, the way a browser would follow them:
 * `href` and `src` of any element, `hx-get`, GET forms submitted with their fields' default
 * values, and the installer command's URL; attribute values entity-decoded, each absolute
 * against the page's URL. What the rendered-links crawl feeds on.
 */

export interface Found {
  url: string;
  /** Where it was found: the page's URL and the attribute, or the wire error. */
  from: string;
  /** htmx asks with HX-Request: true; some routes answer it with a fragment. */
  htmx: boolean;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
function decodeEntities(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith("#x") || name.startsWith("#X")) {
      return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
    }
    if (name.startsWith("#")) {
      return String.fromCodePoint(Number.parseInt(name.slice(1), 10));
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

interface Tag {
  name: string;
  attrs: Map<string, string>;
  /** Offset just after the tag, to find a form's fields. */
  end: number;
}

const TAG =
  /<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s"'=<>/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*\/?>/g;
const ATTR = /([^\s"'=<>/]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;

function tagsOf(html: string): Tag[] {
  const tags: Tag[] = [];
  for (const match of html.matchAll(TAG)) {
    const attrs = new Map<string, string>();
    for (const attr of (match[2] ?? "").matchAll(ATTR)) {
      const name = attr[1]?.toLowerCase();
      if (name) {
        attrs.set(name, decodeEntities(attr[2] ?? attr[3] ?? attr[4] ?? ""));
      }
    }
    tags.push({ name: (match[1] ?? "").toLowerCase(), attrs, end: (match.index ?? 0) + match[0].length });
  }
  return tags;
}

/** What a browser submits for a GET form left as rendered: its fields' default values. */
function formQuery(html: string, form: Tag): URLSearchParams {
  const close = html.indexOf("</form>", form.end);
  const body = html.slice(form.end, close === -1 ? undefined : close);
  const query = new URLSearchParams();
  const tags = tagsOf(body);
  for (const [index, tag] of tags.entries()) {
    const name = tag.attrs.get("name");
    if (name === undefined || tag.attrs.has("disabled")) {
      continue;
    }
    if (tag.name === "input") {
      const type = (tag.attrs.get("type") ?? "text").toLowerCase();
      if (["submit", "button", "image", "reset", "file"].includes(type)) {
        continue;
      }
      if ((type === "checkbox" || type === "radio") && !tag.attrs.has("checked")) {
        continue;
      }
      query.append(name, tag.attrs.get("value") ?? (type === "checkbox" || type === "radio" ? "on" : ""));
    } else if (tag.name === "select") {
      const options: Tag[] = [];
      for (const next of tags.slice(index + 1)) {
        if (next.name === "select") {
          break;
        }
        if (next.name === "option") {
          options.push(next);
        }
      }
      const chosen = options.find((option) => option.attrs.has("selected")) ?? options[0];
      if (chosen) {
        query.append(name, chosen.attrs.get("value") ?? "");
      }
    } else if (tag.name === "textarea") {
      const end = body.indexOf("</textarea>", tag.end);
      query.append(name, decodeEntities(body.slice(tag.end, end === -1 ? undefined : end)));
    }
  }
  return query;
}

/** Every link of a page (or fragment), absolute against the page's URL. */
export function linksOf(html: string, pageUrl: string): Found[] {
  const found: Found[] = [];
  const add = (raw: string, what: string, htmx = false) =>
    found.push({ url: new URL(raw, pageUrl).href, from: `${what} on ${pageUrl}`, htmx });
  for (const tag of tagsOf(html)) {
    for (const attr of ["href", "src"]) {
      const value = tag.attrs.get(attr);
      if (value !== undefined) {
        add(value, `<${tag.name} ${attr}>`);
      }
    }
    const hxGet = tag.attrs.get("hx-get");
    if (hxGet !== undefined) {
      add(hxGet, `<${tag.name} hx-get>`, true);
    }
    if (
      tag.name === "form" &&
      (tag.attrs.get("method") ?? "get").toLowerCase() === "get" &&
      !tag.attrs.has("hx-post")
    ) {
      const action = new URL(tag.attrs.get("action") || pageUrl, pageUrl);
      action.search = formQuery(html, tag).toString();
      add(action.href, "<form method=get> submitted as rendered");
    }
  }
  // The installer command a page shows is a URL too: a host fetches it.
  for (const match of html.matchAll(/curl -fsSL &#39;([^&\s]+)&#39;/g)) {
    add(decodeEntities(match[1] ?? ""), "installer command");
  }
  return found;
}
