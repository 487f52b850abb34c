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
  document.addEventListener("htmx:responseError", (event) => {
    const xhr = event.detail.xhr;
    const text = xhr && typeof xhr.responseText === "string" ? xhr.responseText : "";
    show(
      text.length > 0 && text.length < 500 ? text : `Request failed (${xhr ? xhr.status : "network"})`,
      "error",
    );
  });
  document.addEventListener("htmx:sendError", () => show("The server cannot be reached.", "error"));
  document.addEventListener("fleetback:toast", (event) => show(event.detail.message, event.detail.level));
})();
