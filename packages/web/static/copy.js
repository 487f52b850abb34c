// Copy buttons: <button data-copy="ID" hidden> copies the text of the element #ID. Loaded as a
// file (the CSP forbids inline script). Without script the buttons stay hidden and the text can
// be selected by hand; where the Clipboard API is missing or refused (plain http, an old
// browser) the text is selected so Ctrl+C copies it.
(() => {
  const selectText = (element) => {
    const range = document.createRange();
    range.selectNodeContents(element);
    const selection = window.getSelection();
    if (selection) {
      selection.removeAllRanges();
      selection.addRange(range);
    }
  };
  const copy = async (text) => {
    if (navigator.clipboard && window.isSecureContext) {
      try {
        await navigator.clipboard.writeText(text);
        return true;
      } catch {
        // Refused (no permission, not focused): fall back to selecting.
      }
    }
    return false;
  };
  document.addEventListener("click", async (event) => {
    const button = event.target instanceof Element ? event.target.closest("button[data-copy]") : null;
    if (!button) {
      return;
    }
    const source = document.getElementById(button.getAttribute("data-copy") || "");
    if (!source) {
      return;
    }
    const label = button.getAttribute("data-label") || button.textContent;
    button.setAttribute("data-label", label);
    const copied = await copy(source.textContent || "");
    if (!copied) {
      selectText(source);
    }
    button.setAttribute("data-copied", copied ? "copied" : "selected");
    button.textContent = copied ? "Copied" : "Selected: press Ctrl+C";
    setTimeout(() => {
      button.textContent = label;
      button.removeAttribute("data-copied");
    }, 3000);
  });
  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.hidden = false;
  }
})();
