/**
 * @module digest/digest-text
 * A digest in words: a one-line title that carries the verdict (so a phone's notification says
 * it), a plain-text body and the same as HTML for mail. Every list is its count and at most a few
 * names ("a, b and 3 more"); the link leads to the host list for the rest.
 */
import type { DigestPeriod, QueuedNotification } from "@fleetback/db";
import { formatBytes } from "@fleetback/web";
import { mailHtml } from "../notifications/mail-html.js";
import type { Digest, NamedList } from "./digest-content.js";

export interface DigestText {
  title: string;
  text: string;
  html: string;
}

function names(list: NamedList): string {
  const more = list.count - list.names.length;
  if (list.names.length === 0) {
    return "";
  }
  return more > 0 ? `${list.names.join(", ")} and ${more} more` : list.names.join(", ");
}

function counted(list: NamedList, what: string): string | undefined {
  return list.count === 0 ? undefined : `${list.count} ${what}: ${names(list)}`;
}

function moment(iso: string): string {
  return `${iso.slice(0, 16).replace("T", " ")} UTC`;
}

/** The digest's lines, each a sentence a person reads in order; empty parts are left out. */
export function digestLines(digest: Digest): { title: string; lines: string[] } {
  const h = digest.hosts;
  const attention = [
    counted(digest.failing, `failing`),
    counted(digest.overdue, `overdue`),
    counted(digest.offline, `offline`),
    counted(digest.drills.failed, `with a failed drill`),
  ].filter((line): line is string => line !== undefined);
  const title = digest.all_well
    ? `Fleetback: all well, ${h.total} host${h.total === 1 ? "" : "s"} backed up on time`
    : `Fleetback: ${attention.length} thing${attention.length === 1 ? "" : "s"} need${attention.length === 1 ? "s" : ""} attention (${[
        digest.failing.count && `${digest.failing.count} failing`,
        digest.overdue.count && `${digest.overdue.count} overdue`,
        digest.offline.count && `${digest.offline.count} offline`,
        digest.drills.failed.count &&
          `${digest.drills.failed.count} failed drill${digest.drills.failed.count === 1 ? "" : "s"}`,
      ]
        .filter(Boolean)
        .join(", ")})`;
  const c = digest.changes;
  const changes = [
    counted(c.new_failures, "new failing"),
    counted(c.resolved, "resolved"),
    counted(c.newly_overdue, "newly overdue"),
    counted(c.new_hosts, "new hosts"),
    counted(c.newly_held, "newly held (no forget or prune until released)"),
  ].filter((line): line is string => line !== undefined);
  const growth = (entries: Digest["growth"]["fastest"]) =>
    entries
      .map((entry) => `${entry.name} ${entry.bytes >= 0 ? "+" : "−"}${formatBytes(Math.abs(entry.bytes))}`)
      .join(", ");
  const lines = [
    `Digest of ${moment(digest.generated_at)}${digest.since ? `, since ${moment(digest.since)}` : ""}.`,
    `Hosts: ${h.total}; online ${h.online}, offline ${h.offline}, overdue ${h.overdue}, failing ${h.failing}, unprotected ${h.unprotected}; ${digest.deletion.unprotected} can delete their own backups.`,
    ...(attention.length > 0
      ? attention.map((line) => `Needs attention: ${line}.`)
      : ["Nothing needs attention."]),
    ...(digest.unprotected.count > 0 ? [`Not backed up at all: ${names(digest.unprotected)}.`] : []),
    changes.length > 0
      ? `Since the last digest: ${changes.join("; ")}.`
      : "Since the last digest: no change.",
    `Drills: ${digest.drills.passed} passed, ${digest.drills.failed.count} failed.`,
    ...(digest.growth.fastest.length > 0 ? [`Growing most: ${growth(digest.growth.fastest)}.`] : []),
    ...(digest.growth.slowest.length > 0 ? [`Growing least: ${growth(digest.growth.slowest)}.`] : []),
  ];
  return { title, lines };
}

export function digestText(digest: Digest, link: string): DigestText {
  const { title, lines } = digestLines(digest);
  const [first, ...rest] = lines;
  const text = `${lines.join("\n")}\n\nEvery host: ${link}\n`;
  const html = mailHtml({
    title,
    allWell: digest.all_well,
    paragraphs: [first ?? ""],
    items: rest,
    link,
    linkText: "Every host in Fleetback",
  });
  return { title, text, html };
}

/**
 * The digest as a queued notification: text for chat and push channels (each line a sentence),
 * HTML beside it for mail, and for webhooks the digest as data without the ids it keeps for the
 * next one.
 */
export function digestNotification(
  digest: Digest,
  period: DigestPeriod,
  baseUrl: string,
): QueuedNotification {
  const link = `${baseUrl}/hosts`;
  const words = digestText(digest, link);
  const { state: _kept, ...shown } = digest;
  return {
    title: words.title,
    body: digestLines(digest).lines.join("\n"),
    link,
    html: words.html,
    data: { event: "digest", sent_at: digest.generated_at, url: link, period, digest: shown },
  };
}
