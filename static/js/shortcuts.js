// Keyboard shortcuts. The list is the layout's dialog
// (views.shortcutsDialog): "g o" follows its link marked data-go="o", so
// the keys and the places they lead are written once, in the page. Keys
// never fire while someone types in a field, nor with Ctrl, Alt or Meta
// (the browser's own shortcuts).
(() => {
  const typing = (el) => {
    if (!el || el === document.body) return false;
    if (el.isContentEditable) return true;
    const tag = el.tagName;
    if (tag === "TEXTAREA" || tag === "SELECT") return true;
    if (tag !== "INPUT") return false;
    const kind = (el.getAttribute("type") || "text").toLowerCase();
    return !["button", "submit", "reset", "checkbox", "radio", "range", "color", "file", "image"].includes(kind);
  };
  const dialog = () => document.querySelector("[data-shortcuts-dialog]");
  const openList = () => {
    const d = dialog();
    if (d && !d.open) d.showModal();
  };
  // At phone width the header's search is inside the collapsed menu.
  const openMenu = () => {
    if (window.keydeckMenu) window.keydeckMenu.open();
  };
  const search = () => document.querySelector('[data-testid="header-search-input"]');
  const focusSearch = (hint) => {
    const s = search();
    if (!s) return false;
    openMenu();
    if (hint) s.placeholder = hint;
    s.focus();
    s.select();
    return true;
  };
  // g u: the user lookup of the shown connection (focused on arrival), or
  // the header's search where no connection is shown.
  const FOCUS_USER = "keydeck-focus-user";
  const goUser = (link) => {
    const here = document.querySelector('[data-testid="user-input"]');
    if (here) {
      here.focus();
      here.select();
      return;
    }
    if (link) {
      try { sessionStorage.setItem(FOCUS_USER, "1"); } catch (_) { /* focus is a nicety */ }
      link.click();
      return;
    }
    focusSearch("A username, e-mail or account id…");
  };
  let pendingG = 0;
  document.addEventListener("keydown", (ev) => {
    if (ev.defaultPrevented || ev.ctrlKey || ev.altKey || ev.metaKey || typing(ev.target)) return;
    const d = dialog();
    if (pendingG && Date.now() - pendingG < 1500) {
      pendingG = 0;
      const link = d && d.querySelector('[data-go="' + CSS.escape(ev.key) + '"]');
      if (ev.key === "u") {
        ev.preventDefault();
        goUser(link);
      } else if (link) {
        ev.preventDefault();
        link.click();
      }
      return;
    }
    pendingG = 0;
    if (d && d.open) return; // the dialog's own keys: Tab, Enter, Escape
    if (ev.key === "/") {
      if (focusSearch("")) ev.preventDefault();
    } else if (ev.key === "?") {
      ev.preventDefault();
      openList();
    } else if (ev.key === "g") {
      pendingG = Date.now();
    }
  });
  document.addEventListener("click", (ev) => {
    if (ev.target.closest("[data-shortcuts-open]")) openList();
    if (ev.target.closest("[data-shortcuts-close]")) dialog()?.close();
  });
  const arrive = () => {
    document.querySelectorAll("[data-shortcuts-open]").forEach((b) => { b.hidden = false; });
    let want = false;
    try {
      want = sessionStorage.getItem(FOCUS_USER) === "1";
      sessionStorage.removeItem(FOCUS_USER);
    } catch (_) { /* nothing to focus */ }
    const user = want && document.querySelector('[data-testid="user-input"]');
    if (user) user.focus();
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", arrive);
  else arrive();
})();
