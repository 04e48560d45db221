// Times in the browser's time zone. The server writes every time in UTC
// and says so (views.When: <time data-local title="… UTC">); here each is
// rewritten to local time, the UTC text staying in its title (shown on
// hover). The header's "UTC" switch (localStorage keydeck-utc) keeps
// the server's UTC text instead. Live fragments bring new times at any
// moment: a MutationObserver rewrites them as they arrive.
(() => {
  const KEY = "keydeck-utc";
  const wantUTC = () => {
    try { return localStorage.getItem(KEY) === "1"; } catch (_) { return false; }
  };
  const two = (n) => String(n).padStart(2, "0");
  const zoneName = (d) => {
    try {
      const part = new Intl.DateTimeFormat(undefined, { timeZoneName: "short" })
        .formatToParts(d).find((p) => p.type === "timeZoneName");
      return part ? part.value : "";
    } catch (_) {
      return "";
    }
  };
  // A clock ("14:30:05 UTC") has no date: format.Clock is used for
  // moments of the last hours, so the nearest such moment is the one.
  const clockInstant = (text) => {
    const m = /^(\d{2}):(\d{2}):(\d{2}) UTC$/.exec(text);
    if (!m) return null;
    const now = Date.now();
    const d = new Date(now);
    d.setUTCHours(+m[1], +m[2], +m[3], 0);
    const day = 86400000;
    if (d.getTime() - now > day / 2) d.setTime(d.getTime() - day);
    if (now - d.getTime() > day / 2) d.setTime(d.getTime() + day);
    return d;
  };
  const localText = (el, utc) => {
    const d = el.dataset.local === "clock" ? clockInstant(utc) : new Date(el.getAttribute("datetime"));
    if (!d || isNaN(d.getTime())) return utc;
    const clock = two(d.getHours()) + ":" + two(d.getMinutes()) + ":" + two(d.getSeconds());
    const zone = zoneName(d);
    const text = el.dataset.local === "clock" ? clock
      : d.getFullYear() + "-" + two(d.getMonth() + 1) + "-" + two(d.getDate()) + " " + clock;
    return zone ? text + " " + zone : text;
  };
  const render = (el, utcMode) => {
    const utc = el.title;
    if (!utc) return;
    const mode = utcMode ? "utc" : "local";
    if (el.dataset.shown === mode) return;
    el.dataset.shown = mode;
    el.textContent = utcMode ? utc : localText(el, utc);
  };
  const renderAll = (root) => {
    const utcMode = wantUTC();
    root.querySelectorAll("time[data-local]").forEach((el) => render(el, utcMode));
    document.querySelectorAll("[data-utc-toggle]").forEach((b) => {
      b.setAttribute("aria-pressed", utcMode ? "true" : "false");
      b.hidden = false;
    });
  };
  window.keydeckTimes = {
    setUTC(on) {
      try { localStorage.setItem(KEY, on ? "1" : "0"); } catch (_) { /* private mode: this page only */ }
      renderAll(document);
    },
    utc: wantUTC,
  };
  document.addEventListener("click", (ev) => {
    const b = ev.target.closest("[data-utc-toggle]");
    if (!b) return;
    window.keydeckTimes.setUTC(b.getAttribute("aria-pressed") !== "true");
  });
  const start = () => {
    renderAll(document);
    new MutationObserver((records) => {
      for (const r of records) {
        for (const n of r.addedNodes) {
          if (n.nodeType !== 1) continue;
          if (n.matches("time[data-local]")) render(n, wantUTC());
          else renderAll(n);
        }
      }
    }).observe(document.body, { childList: true, subtree: true });
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
