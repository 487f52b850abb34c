import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { loadStaticAssets } from "./assets.js";
import { shortId } from "./format.js";
import { createViews, timeElement, timesInText, viewsDir } from "./views.js";

const assets = loadStaticAssets();
const views = createViews({ assets });

describe("static assets", () => {
  it("serves htmx, pico and our own files with content hashes", () => {
    expect([...assets.keys()].sort()).toEqual([
      "/static/app.css",
      "/static/app.js",
      "/static/copy.js",
      "/static/format.js",
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
    expect(scripts).toHaveLength(3);
    for (const [, attrs, body] of scripts) {
      expect(body).toBe("");
      expect(attrs).toMatch(/src="\/static\/[a-z.-]+\?v=[0-9a-f]{12}"/);
    }
    // The formatter first: a module script runs in order with the deferred ones after it.
    expect(scripts.map(([, attrs]) => /\/static\/([a-z.-]+)/.exec(attrs ?? "")?.[1])).toEqual([
      "format.js",
      "htmx.min.js",
      "app.js",
    ]);
    expect(scripts[0]?.[1]).toContain('type="module"');
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).toContain('"includeIndicatorStyles":false');
  });
});

describe("formats", () => {
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

  it("renders a <time> with ISO as datetime and title and the zone's wall clock with its name", () => {
    expect(timeElement(before(3 * 3600), now, "Europe/Berlin")).toBe(
      '<time datetime="2026-11-23T17:00:00Z" title="2026-11-23T17:00:00Z">23 Nov, 18:00 CET</time>',
    );
    expect(timeElement("2026-11-23T17:00:00Z", now, "Asia/Tokyo", true)).toBe(
      '<time datetime="2026-11-23T17:00:00Z" title="2026-11-23T17:00:00Z" data-zone="Asia/Tokyo">24 Nov, 02:00 GMT+9</time>',
    );
    expect(timeElement(null, now, "UTC")).toBe("–");
    expect(timeElement("garbage", now, "UTC")).toBe("–");
  });

  it("turns the ISO moments of a stored sentence into the page's times, escaping the rest", () => {
    expect(
      timesInText(
        "no backup since 2026-11-23T17:00:00Z (due 2026-11-23T18:00:00.000Z) <b>",
        now,
        "Europe/Berlin",
      ),
    ).toBe(
      'no backup since <time datetime="2026-11-23T17:00:00Z" title="2026-11-23T17:00:00Z">23 Nov, 18:00 CET</time>' +
        ' (due <time datetime="2026-11-23T18:00:00Z" title="2026-11-23T18:00:00Z">23 Nov, 19:00 CET</time>) &lt;b&gt;',
    );
    expect(timesInText("2026-13-45T99:99:00Z stays", now, "UTC")).toBe("2026-13-45T99:99:00Z stays");
    expect(timesInText(null, now, "UTC")).toBe("");
    const clocked = createViews({ assets, now: () => now, timeZone: "Europe/Berlin" });
    const html = clocked.render("pages/alerts.njk", {
      alerts: [
        {
          id: "a1",
          host_id: "h1",
          host_name: "web",
          kind: "backup_overdue",
          state: "open",
          message: "last snapshot 2026-11-23T17:00:00Z",
        },
      ],
    });
    expect(html).toContain('<time datetime="2026-11-23T17:00:00Z"');
    expect(html).not.toContain("snapshot 2026-11-23T17:00:00Z");
  });

  it("offers it to templates as the when filter, counted from the views' clock", () => {
    const clocked = createViews({ assets, now: () => now, timeZone: "Europe/Berlin" });
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
      '<time datetime="2026-11-23T18:00:00Z" title="2026-11-23T18:00:00Z">23 Nov, 19:00 CET</time>',
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
    expect(alerts).toContain(">23 Nov, 17:00 UTC</time>");
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
    expect(jobs).toContain(">23 Nov, 19:50 UTC</time>");
  });
});

describe("one way to print a moment", () => {
  const templates = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? templates(join(dir, entry.name))
        : entry.name.endsWith(".njk")
          ? [join(dir, entry.name)]
          : [],
    );

  it("leaves every date in every template to the when, timeText or iso filter", () => {
    const offenders: string[] = [];
    for (const file of templates(viewsDir)) {
      const name = relative(viewsDir, file);
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, index) => {
          // A <time> written by hand, a Date's own printing, or a view model's ready-made time text.
          if (
            /<time\b|toISOString|toLocale|toUTCString|getFullYear|Text\[|(deadline|Fire|runs)Text/.test(line)
          ) {
            offenders.push(`${name}:${index + 1}`);
          }
        });
    }
    expect(templates(viewsDir).length).toBeGreaterThan(30);
    expect(offenders).toEqual([]);
  });

  it("keeps the formats in format.js alone: the page scripts carry no copies", () => {
    const staticDir = join(viewsDir, "../static");
    for (const script of ["app.js", "job-stream.js", "copy.js"]) {
      const source = readFileSync(join(staticDir, script), "utf8");
      expect(source, script).not.toMatch(/KiB|toLocale|toFixed|Intl\./);
    }
    expect(readFileSync(join(staticDir, "format.js"), "utf8")).toContain("window.fleetbackFormat");
  });
});
