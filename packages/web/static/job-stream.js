// Fleetback job page: follows /jobs/:id/stream (a WebSocket, one JSON {type, payload} per
// message) and updates the page in place. A dropped socket reconnects; the server starts every
// connection with the job's state, and log lines already shown are skipped by seq. It stops, and
// says why, when following is no longer allowed: the server ends an open stream with 4000 + the
// HTTP status (4401 signed out or expired, 4403, 4404), and a browser cannot see why an upgrade
// was refused, so a socket that never opened asks the JSON API. Loaded as a file (the CSP forbids
// inline script).
(() => {
  const root = document.getElementById("job");
  const path = root?.getAttribute("data-stream");
  if (!root || !path || typeof WebSocket !== "function") {
    return;
  }
  const url = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${path}`;
  const jobId = root.getAttribute("data-job-id") || "";
  const RECONNECT_MS = [1000, 2000, 5000, 10000, 30000];
  const $ = (id) => document.getElementById(id);
  // The page's own formats (format.js), so a live figure reads as the reloaded page prints it.
  const { formatBytes: bytes, formatDuration: duration, formatIso, formatTime } = window.fleetbackFormat;
  const text = (id, value) => {
    const el = $(id);
    if (el) {
      el.textContent = value;
    }
  };
  // A moment arriving live reads like the server-rendered ones: local time with zone, ISO on hover.
  const timeElement = (iso) => {
    const at = formatIso(iso);
    if (at === "–") {
      return null;
    }
    const time = document.createElement("time");
    time.setAttribute("datetime", at);
    time.title = at;
    time.textContent = formatTime(at);
    return time;
  };
  const moment = (id, iso) => {
    const el = $(id);
    const time = timeElement(iso);
    if (el && time) {
      el.replaceChildren(time);
    } else {
      text(id, "–");
    }
  };
  let currentStatus = $("job-status")?.textContent || "";
  const setStatus = (status) => {
    currentStatus = status;
    const el = $("job-status");
    if (el) {
      el.textContent = status;
      el.className = `status-${status}`;
    }
  };
  let lastSeq = Number(root.getAttribute("data-last-seq") || "0");
  // What the rate says while a capped backup uploads what it has read (the server words it, as on
  // the reloaded page): see finishing below.
  const cappedRate = root.getAttribute("data-capped-rate") || "";

  let lastProgress;
  // The rate between two progress reports, smoothed: what a capped upload actually moves.
  let sample;
  let smoothed;
  const rate = (p) => {
    const now = Date.now();
    if (typeof p.bytes_done !== "number") {
      return;
    }
    if (sample && now > sample.at && p.bytes_done >= sample.bytes) {
      const current = ((p.bytes_done - sample.bytes) * 1000) / (now - sample.at);
      smoothed = smoothed === undefined ? current : smoothed * 0.7 + current * 0.3;
      text("job-rate", `${bytes(Math.round(smoothed))}/s`);
    }
    sample = { at: now, bytes: p.bytes_done };
  };
  const progress = (p) => {
    lastProgress = p;
    const section = $("job-progress-section");
    if (section) {
      section.hidden = false;
    }
    const percent = Math.round(Math.min(1, Math.max(0, p.percent_done || 0)) * 1000) / 10;
    // restic reaches 100 % when it has read everything; the last packs and the index are still
    // being written (slowly under an upload cap). Say so instead of "100 %, time left –".
    // Only once every byte is read: restic's percent alone can round up to 100 before that.
    const finishing =
      percent >= 100 &&
      currentStatus === "running" &&
      (typeof p.bytes_total !== "number" || (p.bytes_done || 0) >= p.bytes_total);
    // restic's figures count what it has read. Once that is all, they stand still while it
    // uploads (most of the run under a cap, as it reads far ahead of the upload): a rate measured
    // from them would fall to 0, so the page says what it knows, the cap, or nothing.
    if (finishing) {
      sample = undefined;
      smoothed = undefined;
      text("job-rate", cappedRate || "–");
    } else {
      rate(p);
    }
    const bar = $("job-progress");
    if (bar) {
      if (finishing) {
        bar.removeAttribute("value");
      } else {
        bar.value = percent;
      }
      bar.textContent = `${percent} %`;
    }
    text("job-percent", finishing ? (cappedRate ? "uploading…" : "finishing…") : String(percent));
    const unit = $("job-percent-unit");
    if (unit) {
      unit.hidden = finishing;
    }
    text(
      "job-files",
      typeof p.files_total === "number" ? `${p.files_done} of ${p.files_total}` : String(p.files_done),
    );
    text(
      "job-bytes",
      typeof p.bytes_total === "number"
        ? `${bytes(p.bytes_done)} of ${bytes(p.bytes_total)}`
        : bytes(p.bytes_done),
    );
    text(
      "job-eta",
      finishing
        ? cappedRate
          ? "restic has read everything and is uploading it under the cap; it does not say how much is left"
          : "restic has read everything and is writing the last data to the repository"
        : typeof p.eta_seconds === "number"
          ? duration(p.eta_seconds)
          : "–",
    );
    text("job-current-file", p.current_file || "–");
  };

  const retried = (line) => {
    const notice = $("job-retries");
    if (!notice) {
      return;
    }
    const count = Number(notice.getAttribute("data-count") || "0") + 1;
    notice.setAttribute("data-count", String(count));
    text("job-retries-count", String(count));
    text("job-retries-last", line);
    notice.hidden = false;
  };

  const logLine = (l) => {
    if (l.seq <= lastSeq) {
      return;
    }
    lastSeq = l.seq;
    const log = $("job-log");
    if (!log) {
      return;
    }
    const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 8;
    // The server renders each line for people (text) and keeps restic's own (raw) behind it.
    const shown = typeof l.text === "string" ? l.text : l.line;
    let row;
    if (typeof l.raw === "string") {
      row = document.createElement("details");
      const summary = document.createElement("summary");
      summary.textContent = shown;
      const raw = document.createElement("code");
      raw.className = "log-raw";
      raw.textContent = l.raw;
      row.append(summary, raw);
    } else {
      row = document.createElement("div");
      row.textContent = shown;
    }
    row.className = `log-line ${l.stream}${l.retry ? " retry" : ""}`;
    row.setAttribute("data-seq", String(l.seq));
    log.appendChild(row);
    if (l.retry) {
      retried(shown);
    }
    while (log.childElementCount > 1000 && log.firstElementChild) {
      log.firstElementChild.remove();
    }
    if (atBottom) {
      log.scrollTop = log.scrollHeight;
    }
  };

  const finished = (f) => {
    setStatus(f.status);
    text("job-exit-code", f.exit_code === null || f.exit_code === undefined ? "–" : String(f.exit_code));
    text("job-error", f.error || "–");
    moment("job-finished-at", f.finished_at);
    text("job-retries-verb", "restic retried");
    const bar = $("job-progress");
    if (f.status === "succeeded") {
      if (bar) {
        bar.value = 100;
      }
      text("job-percent", "100");
    } else if (bar && !bar.hasAttribute("value") && lastProgress) {
      // Stopped after reading everything, before it was all written: restic's 100 % is what it
      // read, so no full bar for work that was not kept (the server's page says the same).
      bar.hidden = true;
      text("job-percent", "all read, not all written");
    }
    const unit = $("job-percent-unit");
    if (unit) {
      unit.hidden = f.status !== "succeeded" && Boolean(bar?.hidden);
    }
    if ($("job-eta")?.textContent?.startsWith("restic has read")) {
      text("job-eta", "–");
    }
    const body = $("job-summary");
    if (body && f.summary && typeof f.summary === "object") {
      body.replaceChildren();
      const rows = Array.isArray(f.summary_rows)
        ? f.summary_rows
        : Object.entries(f.summary).map(([key, value]) => ({
            key,
            label: key,
            value: typeof value === "string" ? value : JSON.stringify(value),
          }));
      for (const r of rows) {
        const row = document.createElement("tr");
        row.setAttribute("data-key", r.key);
        const th = document.createElement("th");
        th.scope = "row";
        th.textContent = r.label;
        const td = document.createElement("td");
        const time = r.at ? timeElement(r.at) : null;
        if (time) {
          td.appendChild(time);
        } else {
          td.textContent = r.value;
        }
        row.append(th, td);
        body.appendChild(row);
      }
      text("job-summary-json", JSON.stringify(f.summary, null, 2));
      const section = $("job-summary-section");
      if (section) {
        section.hidden = body.childElementCount === 0;
      }
    }
    $("job-cancel")?.remove();
    const live = $("job-live");
    if (live) {
      live.hidden = true;
    }
    root.setAttribute("data-finished", f.status);
    // The ended job's page is what the server renders from what it stored (the diff's table, who
    // stopped it and how far it got): show exactly that, so live and reloaded never disagree. It is
    // fetched and swapped in place, not reloaded: the reader keeps their place and focus.
    showEnded();
  };

  const showEnded = () => {
    fetch(location.href, { credentials: "same-origin", headers: { accept: "text/html" } })
      .then((response) => (response.ok ? response.text() : Promise.reject(new Error(`${response.status}`))))
      .then((html) => {
        const next = new DOMParser().parseFromString(html, "text/html").getElementById("main");
        const main = document.getElementById("main");
        if (!next || !main) {
          throw new Error("no page to show");
        }
        // Its scripts are left out: this one and copy.js listen on the document already.
        for (const script of next.querySelectorAll("script")) {
          script.remove();
        }
        main.replaceChildren(...[...next.childNodes].map((node) => document.importNode(node, true)));
        for (const button of main.querySelectorAll("button[data-copy]")) {
          button.hidden = false;
        }
        if (window.htmx) {
          window.htmx.process(main);
        }
        main.dispatchEvent(new CustomEvent("htmx:load", { bubbles: true, detail: { elt: main } }));
      })
      .catch(() => location.reload());
  };

  let done = false;
  let failures = 0;
  const live = (shown) => {
    const el = $("job-live");
    if (el) {
      el.hidden = !shown;
    }
  };
  const handle = (message) => {
    const p = message.payload || {};
    switch (message.type) {
      case "state":
        setStatus(p.job.status);
        if (p.job.progress) {
          progress(p.job.progress);
        }
        break;
      case "job.status":
        setStatus(p.status);
        // "finishing" depends on the status too: a progress at 100 % may come first.
        if (lastProgress) {
          progress(lastProgress);
        }
        if (p.started_at) {
          moment("job-started-at", p.started_at);
        }
        break;
      case "job.progress":
        progress(p);
        break;
      case "log.stream":
        logLine(p);
        break;
      case "job.finished":
        done = true;
        finished(p);
        break;
      default:
        break;
    }
  };
  // Why following stopped, by HTTP status; anything else is a passing failure worth a retry.
  const STOPPED = {
    401: ["Your session has ended, so this page stopped following the job. ", "Sign in again"],
    403: ["You may no longer follow this job. ", "Reload"],
    404: ["This job no longer exists (its host was deleted). ", "Back to the fleet"],
  };
  const stop = (status) => {
    done = true;
    live(false);
    // Its post would be refused as well; the link below is the way on.
    $("job-cancel")?.remove();
    const notice = $("job-stream-notice");
    const [message, label] = STOPPED[status];
    if (!notice) {
      return;
    }
    const link = document.createElement("a");
    link.textContent = label;
    link.href =
      status === 401
        ? `/login?next=${encodeURIComponent(location.pathname)}`
        : status === 403
          ? location.pathname
          : "/";
    notice.replaceChildren(document.createTextNode(message), link);
    notice.hidden = false;
  };
  /** The status that explains a refused upgrade, or undefined when the job can still be followed. */
  const refusedStatus = async () => {
    try {
      const response = await fetch(`/api/jobs/${encodeURIComponent(jobId)}`, {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
        cache: "no-store",
      });
      return response.status in STOPPED ? response.status : undefined;
    } catch {
      return undefined;
    }
  };
  const retry = () => {
    const wait = RECONNECT_MS[Math.min(failures, RECONNECT_MS.length - 1)];
    failures += 1;
    setTimeout(connect, wait);
  };
  const connect = () => {
    const socket = new WebSocket(url);
    let opened = false;
    socket.onopen = () => {
      opened = true;
      failures = 0;
      live(true);
    };
    socket.onmessage = (event) => {
      try {
        handle(JSON.parse(event.data));
      } catch {
        // A malformed message is skipped; the next state resynchronises the page.
      }
    };
    socket.onclose = (event) => {
      live(false);
      if (done) {
        return;
      }
      const status = event.code - 4000;
      if (status in STOPPED) {
        stop(status);
        return;
      }
      if (opened) {
        retry();
        return;
      }
      refusedStatus().then((refused) => {
        if (refused === undefined) {
          retry();
        } else {
          stop(refused);
        }
      });
    };
  };
  connect();
})();
