// Fleetback page behaviour: toasts for htmx errors and server-sent toast events. Loaded as a
// file (the CSP forbids inline script); plain DOM, no framework.
(() => {
  const show = (message, level) => {
    const box = document.getElementById("toasts");
    if (!box || !message) {
      return;
    }
    const toast = document.createElement("div");
    toast.className = `toast ${level || "info"}`;
    toast.setAttribute("data-testid", "toast");
    toast.textContent = message;
    box.appendChild(toast);
    setTimeout(() => toast.remove(), 8000);
  };
  // An error that names its toast in HX-Trigger (the server's error handler) shows through the
  // fleetback:toast listener below; showing its body here too would say it twice.
  const triggersToast = (xhr) => {
    const trigger =
      xhr && typeof xhr.getResponseHeader === "function" ? xhr.getResponseHeader("HX-Trigger") : null;
    return typeof trigger === "string" && trigger.includes("fleetback:toast");
  };
  document.addEventListener("htmx:responseError", (event) => {
    const xhr = event.detail.xhr;
    if (triggersToast(xhr)) {
      return;
    }
    const text = xhr && typeof xhr.responseText === "string" ? xhr.responseText : "";
    show(
      text.length > 0 && text.length < 500 ? text : `Request failed (${xhr ? xhr.status : "network"})`,
      "error",
    );
  });
  document.addEventListener("htmx:sendError", () => show("The server cannot be reached.", "error"));
  document.addEventListener("fleetback:toast", (event) => show(event.detail.message, event.detail.level));
  // Times (issue 17.13): the server titles each <time> with the exact moment in UTC; the reader
  // sees it in their own zone instead, also in content htmx swaps in later.
  const localTimes = (root) => {
    if (!root || typeof root.querySelectorAll !== "function") {
      return;
    }
    const times = [...root.querySelectorAll("time[datetime]")];
    if (typeof root.matches === "function" && root.matches("time[datetime]")) {
      times.push(root);
    }
    for (const time of times) {
      const date = new Date(time.getAttribute("datetime"));
      if (!Number.isNaN(date.getTime())) {
        time.title = date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "long" });
      }
    }
  };
  localTimes(document);
  document.addEventListener("htmx:load", (event) => localTimes(event.detail.elt));
})();
