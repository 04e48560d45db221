// The header's theme choice: system, light or dark, kept by theme.js
// (window.keydeckTheme), which also says when it changes (another tab,
// the system's own switch).
(() => {
  const show = () => {
    const t = window.keydeckTheme;
    document.querySelectorAll("[data-theme-toggle]").forEach((sel) => {
      if (!t) return;
      sel.value = t.get();
      sel.hidden = false;
    });
  };
  document.addEventListener("change", (ev) => {
    const sel = ev.target.closest("[data-theme-toggle]");
    if (sel && window.keydeckTheme) window.keydeckTheme.set(sel.value);
  });
  document.addEventListener("keydeck:theme", show);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", show);
  else show();
})();

// The header's menu at phone width. Without script the Menu link still
// opens it (#header-menu:target in app.css); with script it is a button
// that says whether the menu is open (aria-expanded) and keeps the URL.
(() => {
  const menu = () => document.getElementById("header-menu");
  const button = () => document.querySelector("[data-menu-button]");
  const set = (open) => {
    const m = menu();
    const b = button();
    if (!m || !b) return;
    m.toggleAttribute("data-open", open);
    b.setAttribute("aria-expanded", open ? "true" : "false");
  };
  window.keydeckMenu = {
    open: () => set(true),
  };
  document.addEventListener("click", (ev) => {
    const b = ev.target.closest("[data-menu-button]");
    if (!b) return;
    ev.preventDefault();
    set(b.getAttribute("aria-expanded") !== "true");
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key !== "Escape" || button()?.getAttribute("aria-expanded") !== "true") return;
    set(false);
    button().focus();
  });
})();

// At phone width the connection's pages are one row that scrolls
// sideways: bring the shown page's tab into view.
(() => {
  const show = () => {
    const cur = document.querySelector('[data-testid="sections"] [aria-current="page"]');
    const row = cur && cur.parentElement;
    if (!row || row.scrollWidth <= row.clientWidth) return;
    row.scrollLeft = cur.offsetLeft - row.offsetLeft - (row.clientWidth - cur.offsetWidth) / 2;
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", show);
  else show();
})();
