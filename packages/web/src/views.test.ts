import { describe, expect, it } from "vitest";
import { loadStaticAssets } from "./assets.js";
import { formatBytes, formatDuration, formatExactUtc, formatRelative, shortId } from "./format.js";
import { createViews, timeElement } from "./views.js";

const assets = loadStaticAssets();
const views = createViews({ assets });

describe("static assets", () => {
  it("serves htmx, pico and our own files with content hashes", () => {
    expect([...assets.keys()].sort()).toEqual([
      "/static/app.css",
      "/static/app.js",
      "/static/copy.js",
      "/static/htmx.min.js",
      "/static/job-stream.js",
      "/static/pico.min.css",
    ]);
    for (const asset of assets.values()) {
      expect(asset.body.length).toBeGreaterThan(100);
      expect(asset.hash).toMatch(/^[0-9a-f]{12}$/);
    }
  });
});

describe("base layout", () => {
  it("escapes every value and loads scripts only from our origin", () => {
    const html = views.render("layouts/base.njk", { title: "<script>alert(1)</script>", csrfToken: 'x"y' });
    expect(html).not.toContain("<script>alert(1)</script>");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("x&quot;y");
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(2);
    for (const [, attrs, body] of scripts) {
      expect(body).toBe("");
      expect(attrs).toMatch(/src="\/static\/[a-z.]+\?v=[0-9a-f]{12}"/);
    }
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).toContain('"includeIndicatorStyles":false');
  });
});

describe("formats", () => {
  it.each([
    [0, "0 B"],
    [1023, "1023 B"],
    [1536, "1.50 KiB"],
    [65598, "64.1 KiB"],
    [5 * 1024 ** 3, "5.00 GiB"],
    [-1, "–"],
  ])("formatBytes(%s)", (input, expected) => {
    expect(formatBytes(input)).toBe(expected);
  });

  it.each([
    [4.2, "4 s"],
    [125, "2 min 5 s"],
    [7260, "2 h 1 min"],
  ])("formatDuration(%s)", (input, expected) => {
    expect(formatDuration(input)).toBe(expected);
  });

  it.each([
    ["a".repeat(64), "aaaaaaaa"],
    ["3F2504E04F89", "3F2504E0"],
    ["01JD0000000000000000000000", "01JD0000000000000000000000"],
    ["abc", "abc"],
    [undefined, ""],
  ])("shortId(%s)", (input, expected) => {
    expect(shortId(input)).toBe(expected);
  });
});

describe("long ids", () => {
  it("shows a snapshot id by its first 8 digits, the whole one on hover, to screen readers and for copying", () => {
    const id = "0123456789abcdef".repeat(4);
    const html = views.render("pages/job.njk", {
      job: {
        id: "01JDJOB00000000000000000000",
        kind: "drill",
        status: "succeeded",
        params: { snapshot_id: id },
      },
      host: { id: "01JDHOST0000000000000000000", name: "web-01" },
      summary: [],
      logTail: [],
    });
    const shown = /data-testid="job-drill-snapshot">([\s\S]*?)<\/dd>/.exec(html)?.[1] ?? "";
    expect(shown).toContain(`<code class="id-short" title="${id}" aria-hidden="true">01234567</code>`);
    expect(shown).toContain(`<span class="visually-hidden" id="full-id-${id}">${id}</span>`);
    expect(shown).toContain(`data-copy="full-id-${id}"`);
    expect(html).toMatch(/<script src="\/static\/copy\.js\?v=\w+" defer><\/script>/);
  });
});

describe("times", () => {
  const now = new Date("2026-11-23T20:00:00Z");
  const before = (seconds: number) => new Date(now.getTime() - seconds * 1000);

  it.each([
    [10, "just now"],
    [60, "1 min ago"],
    [45 * 60, "45 min ago"],
    [3 * 3600 + 600, "3 h ago"],
    [30 * 3600, "30 h ago"],
    [5 * 86400, "5 d ago"],
    [-2 * 3600, "in 2 h"],
    [-20, "in a moment"],
    [90 * 86400, "2026-08-25"],
  ])("formatRelative(%s s before now)", (seconds, expected) => {
    expect(formatRelative(before(seconds), now)).toBe(expected);
  });

  it("reads ISO strings, and says – for what is no time", () => {
    expect(formatRelative("2026-11-23T17:00:00Z", now)).toBe("3 h ago");
    expect(formatRelative("not a date", now)).toBe("–");
    expect(formatRelative(undefined, now)).toBe("–");
    expect(formatExactUtc(new Date("2026-11-23T17:04:05.678Z"))).toBe("2026-11-23 17:04:05 UTC");
  });

  it("renders a <time> with the ISO moment, the exact UTC time as title and the relative text", () => {
    expect(timeElement(before(3 * 3600), now)).toBe(
      '<time datetime="2026-11-23T17:00:00.000Z" title="2026-11-23 17:00:00 UTC">3 h ago</time>',
    );
    expect(timeElement(null, now)).toBe("–");
    expect(timeElement("garbage", now)).toBe("–");
  });

  it("offers it to templates as the when filter, counted from the views' clock", () => {
    const clocked = createViews({ assets, now: () => now });
    const html = clocked.render("pages/audit.njk", {
      entries: [
        {
          id: "01JDAUDIT000000000000000000",
          at: before(2 * 3600),
          actorKind: "user",
          username: "root",
          action: "host.delete",
          targetKind: "host",
          targetId: "01JDHOST0000000000000000000",
          targetName: "web-01",
        },
      ],
    });
    expect(html).toContain(
      '<time datetime="2026-11-23T18:00:00.000Z" title="2026-11-23 18:00:00 UTC">2 h ago</time>',
    );
    expect(html).toContain('<a href="/hosts/01JDHOST0000000000000000000">web-01</a>');
  });

  it("names an alert's group and the user who started a job", () => {
    const clocked = createViews({ assets, now: () => now });
    const alerts = clocked.render("pages/alerts.njk", {
      state: "open",
      alerts: [
        {
          id: "01JDALERT000000000000000000",
          host_id: "01JDHOST0000000000000000000",
          host_name: "db-01",
          group_name: "postgres",
          kind: "backup_overdue",
          message: "no snapshot since yesterday",
          created_at: before(3 * 3600),
          last_seen_at: before(60),
          resolved_at: null,
          state: "open",
        },
      ],
    });
    expect(alerts).toContain('<a href="/hosts/01JDHOST0000000000000000000/sources">postgres</a>');
    expect(alerts).toContain(">3 h ago</time>");
    const jobs = clocked.render("partials/job-table.njk", {
      jobs: [
        {
          id: "J1",
          kind: "backup",
          status: "succeeded",
          actorKind: "user",
          actorUsername: "olga",
          createdAt: before(600),
        },
        {
          id: "J2",
          kind: "backup",
          status: "queued",
          actorKind: "schedule",
          actorUsername: null,
          createdAt: before(60),
        },
      ],
    });
    const actors = [...jobs.matchAll(/data-testid="job-actor">([^<]+)</g)].map((m) => m[1]);
    expect(actors).toEqual(["olga", "schedule"]);
    expect(jobs).toContain(">10 min ago</time>");
  });
});
