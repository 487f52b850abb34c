// Fleetback page behaviour: toasts for htmx errors and server-sent toast events. Loaded as a
// file (the CSP forbids inline script); plain DOM, no framework.
(() => {
  // An error toast stays until dismissed (issue 35.7): a message that vanishes while it is being
  // read is not said. Other toasts still go after 8 s.
  const show = (message, level) => {
    const box = document.getElementById("toasts");
    if (!box || !message) {
      return;
    }
    const toast = document.createElement("div");
    toast.className = `toast ${level || "info"}`;
    toast.setAttribute("data-testid", "toast");
    const text = document.createElement("span");
    text.textContent = message;
    toast.appendChild(text);
    if (level === "error") {
      const close = document.createElement("button");
      close.type = "button";
      close.className = "toast-close secondary outline";
      close.setAttribute("aria-label", "Dismiss");
      close.setAttribute("data-testid", "toast-dismiss");
      close.addEventListener("click", () => toast.remove());
      toast.appendChild(close);
    } else {
      setTimeout(() => toast.remove(), 8000);
    }
    box.appendChild(toast);
  };
  // Issue 35.7: a refused form shows each named problem at its input (aria-invalid, a message the
  // input is described by) and all of them in a summary at its top that stays until the next try.
  const inputOf = (form, field) => {
    const parts = field.split(".");
    for (let n = parts.length; n > 0; n--) {
      const name = parts.slice(0, n).join("_");
      const found = form.elements.namedItem(name) || form.elements.namedItem(parts.slice(0, n).join("."));
      const input = found && typeof found.length === "number" && !found.tagName ? found[0] : found;
      if (input && input.type !== "hidden") {
        return input;
      }
    }
    return null;
  };
  const labelOf = (input, field) => {
    const legend =
      input?.type === "checkbox" || input?.type === "radio"
        ? input.closest("fieldset")?.querySelector("legend")
        : null;
    const label = legend || input?.labels?.[0];
    const text = label ? label.firstChild?.textContent || label.textContent : "";
    return text.trim() || input?.getAttribute("aria-label") || field;
  };
  let errorCount = 0;
  const clearFieldErrors = (form) => {
    for (const old of form.querySelectorAll("[data-form-error]")) {
      old.remove();
    }
    for (const input of form.querySelectorAll("[aria-invalid=true]")) {
      input.removeAttribute("aria-invalid");
      const before = input.getAttribute("data-described-before");
      if (before) {
        input.setAttribute("aria-describedby", before);
      } else {
        input.removeAttribute("aria-describedby");
      }
      input.removeAttribute("data-described-before");
    }
  };
  // False when no named field is an input of this form: the caller toasts the message instead.
  const showFieldErrors = (form, fields) => {
    clearFieldErrors(form);
    if (!fields.some((problem) => inputOf(form, problem.field))) {
      return false;
    }
    const summary = document.createElement("div");
    summary.className = "form-error-summary";
    summary.setAttribute("role", "alert");
    summary.setAttribute("tabindex", "-1");
    summary.setAttribute("data-form-error", "");
    summary.setAttribute("data-testid", "form-error-summary");
    const heading = document.createElement("p");
    heading.innerHTML = "<strong></strong>";
    heading.firstChild.textContent = `Not saved; fix ${fields.length === 1 ? "this" : "these"} first:`;
    const list = document.createElement("ul");
    summary.append(heading, list);
    for (const problem of fields) {
      const input = inputOf(form, problem.field);
      const item = document.createElement("li");
      item.textContent = `${labelOf(input, problem.field)}: ${problem.message}`;
      list.appendChild(item);
      if (!input || input.getAttribute("aria-invalid") === "true") {
        continue;
      }
      errorCount += 1;
      const message = document.createElement("small");
      message.className = "field-error";
      message.id = `form-error-${errorCount}`;
      message.setAttribute("data-form-error", "");
      message.setAttribute("data-testid", `field-error-${input.name}`);
      message.textContent = problem.message;
      const before = input.getAttribute("aria-describedby");
      if (before) {
        input.setAttribute("data-described-before", before);
      }
      input.setAttribute("aria-invalid", "true");
      input.setAttribute("aria-describedby", before ? `${message.id} ${before}` : message.id);
      // A group of boxes sharing the name (hosts to update) is told under its legend, not inside
      // the first box's label.
      const legend =
        input.type === "checkbox" || input.type === "radio"
          ? input.closest("fieldset")?.querySelector("legend")
          : null;
      (legend || input).insertAdjacentElement("afterend", message);
    }
    form.prepend(summary);
    return true;
  };
  // Issue 35.7: a save says so next to its form ("Saved", polite), also across the HX-Redirect
  // reload most saves answer with, and across a plain post's redirect: the form's action is
  // remembered for the page that follows.
  const SAVED_KEY = "fleetback:saved";
  const rememberSaved = (form) => {
    try {
      sessionStorage.setItem(SAVED_KEY, form.getAttribute("action") || "");
    } catch {
      // No storage (private mode): the page that follows simply does not say it.
    }
  };
  const showSaved = (form) => {
    const details = form.closest("details");
    const anchor = details && !details.open ? details : form;
    const old = anchor.parentElement?.querySelector(":scope > .form-saved");
    if (old) {
      old.remove();
    }
    const note = document.createElement("p");
    note.className = "form-saved";
    note.setAttribute("role", "status");
    note.setAttribute("aria-live", "polite");
    note.setAttribute("data-testid", "saved");
    anchor.insertAdjacentElement("afterend", note);
    // Filled after insertion so the live region announces it.
    setTimeout(() => {
      note.textContent = "Saved";
    }, 0);
  };
  const formOf = (elt) => (typeof elt?.closest === "function" ? elt.closest("form") : null);
  const savingForm = (elt) => {
    const form = formOf(elt);
    return form?.hasAttribute("data-saves") ? form : null;
  };
  document.addEventListener("htmx:beforeRequest", (event) => {
    const form = formOf(event.detail.elt);
    if (form) {
      clearFieldErrors(form);
    }
  });
  document.addEventListener("htmx:beforeOnLoad", (event) => {
    const xhr = event.detail.xhr;
    const form = savingForm(event.detail.elt);
    if (!form || !xhr || xhr.status < 200 || xhr.status >= 300) {
      return;
    }
    if (xhr.getResponseHeader("HX-Redirect")) {
      rememberSaved(form);
    } else {
      showSaved(form);
    }
  });
  // A plain post (htmx took none it handles: it prevents their default first, at the form).
  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (!event.defaultPrevented && form instanceof HTMLFormElement && form.hasAttribute("data-saves")) {
      rememberSaved(form);
    }
  });
  try {
    const action = sessionStorage.getItem(SAVED_KEY);
    sessionStorage.removeItem(SAVED_KEY);
    // A refused plain post comes back as its page again, marked (http/refused-form): not saved.
    const refused = document.querySelector(".form-error-summary, [aria-invalid='true']");
    const form =
      action && !refused
        ? [...document.querySelectorAll("form[data-saves]")].find((f) => f.getAttribute("action") === action)
        : null;
    if (form) {
      showSaved(form);
    }
  } catch {
    // As above.
  }
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
  document.addEventListener("fleetback:toast", (event) => {
    const detail = event.detail;
    const form =
      event.target && typeof event.target.closest === "function" ? event.target.closest("form") : null;
    if (form && Array.isArray(detail.fields) && showFieldErrors(form, detail.fields)) {
      return;
    }
    show(detail.message, detail.level);
  });
  // Times (issue 35.8): the server writes each <time> as its own zone's wall clock; the reader
  // sees their own zone's instead, in the same words (format.js), also in content htmx swaps in
  // later. A <time data-zone> keeps its zone: a schedule's 03:00 is the host's 03:00.
  const format = window.fleetbackFormat;
  const localTimes = (root) => {
    if (!format || !root || typeof root.querySelectorAll !== "function") {
      return;
    }
    const times = [...root.querySelectorAll("time[datetime]")];
    if (typeof root.matches === "function" && root.matches("time[datetime]")) {
      times.push(root);
    }
    for (const time of times) {
      const date = format.toDate(time.getAttribute("datetime"));
      if (date) {
        time.textContent = format.formatTime(date, time.getAttribute("data-zone") || undefined);
      }
    }
  };
  localTimes(document);
  // A part of the page that refreshes itself (the dashboard, the host list) keeps the <details>
  // the reader opened, instead of closing them every few seconds.
  let openDetails = [];
  document.addEventListener("htmx:beforeSwap", (event) => {
    const target = event.detail.target;
    openDetails =
      typeof target?.querySelectorAll === "function"
        ? [...target.querySelectorAll("details[open][data-testid]")].map((d) => d.getAttribute("data-testid"))
        : [];
  });
  document.addEventListener("htmx:load", (event) => {
    localTimes(event.detail.elt);
    const root = event.detail.elt;
    for (const testid of openDetails) {
      const details =
        typeof root?.querySelector === "function"
          ? root.querySelector(`details[data-testid="${testid}"]`)
          : null;
      details?.setAttribute("open", "");
    }
  });
})();
