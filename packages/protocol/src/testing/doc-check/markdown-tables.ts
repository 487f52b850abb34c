/**
 * @module testing/doc-check/markdown-tables
 * Just enough Markdown for protocol-doc.test.ts to read PROTOCOL.md: its headings (skipping
 * fenced code), the lines of a section, its pipe tables and the code spans of a cell. Not a
 * Markdown parser: the page is written to this subset so the test can hold it to the schemas.
 * Kept out of the test file so the check stays readable, and out of the build (tsconfig.build.json
 * leaves src/testing out).
 */

export interface Heading {
  level: number;
  text: string;
  index: number;
}

export interface Row {
  cells: string[];
  /** The whole row, for values and bounds that may sit in any cell. */
  text: string;
}

export interface Table {
  header: string[];
  rows: Row[];
}

export interface Doc {
  lines: string[];
  headings: Heading[];
}

export function parseDoc(text: string): Doc {
  const lines = text.split("\n");
  const headings: Heading[] = [];
  let fenced = false;
  lines.forEach((line, index) => {
    if (line.startsWith("```")) {
      fenced = !fenced;
    }
    const match = fenced ? null : /^(#{1,6}) (.*)$/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) {
      headings.push({ level: match[1].length, text: match[2].trim(), index });
    }
  });
  return { lines, headings };
}

/** The lines under `heading` up to the next heading of the same or a higher level. */
export function bodyOf(doc: Doc, heading: Heading): string[] {
  const next = doc.headings.find((h) => h.index > heading.index && h.level <= heading.level);
  return doc.lines.slice(heading.index + 1, next?.index ?? doc.lines.length);
}

/** The lines under `heading` up to its first subheading. */
export function introOf(doc: Doc, heading: Heading): string[] {
  const next = doc.headings.find((h) => h.index > heading.index);
  return doc.lines.slice(heading.index + 1, next?.index ?? doc.lines.length);
}

function splitCells(line: string): string[] {
  const cells = line
    .trim()
    .replace(/^\|/, "")
    .replace(/\|$/, "")
    .split(/(?<!\\)\|/);
  return cells.map((cell) => cell.trim().replaceAll("\\|", "|"));
}

export function tablesIn(lines: readonly string[]): Table[] {
  const tables: Table[] = [];
  let block: string[] = [];
  const flush = () => {
    const [head, separator, ...rest] = block;
    if (head !== undefined && separator !== undefined && /^\|[\s:|-]+\|$/.test(separator.trim())) {
      tables.push({
        header: splitCells(head).map((cell) => cell.toLowerCase()),
        rows: rest.map((line) => ({ cells: splitCells(line), text: line })),
      });
    }
    block = [];
  };
  for (const line of lines) {
    if (line.trim().startsWith("|")) {
      block.push(line);
    } else {
      flush();
    }
  }
  flush();
  return tables;
}

export function codeSpans(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? "");
}

export function column(table: Table, name: string): number {
  return table.header.indexOf(name);
}

export function tableWith(doc: Doc, firstColumn: string, otherColumn: string): Table | undefined {
  return tablesIn(doc.lines).find(
    (table) => table.header[0] === firstColumn && table.header.includes(otherColumn),
  );
}
