// Keydeck's theme, applied before the page paints (loaded without defer in
// <head>): the stored choice ("light", "dark" or "system", in localStorage
// "keydeck-theme") or, for "system" and no choice, prefers-color-scheme.
// The palette's CSS variables flip under html.dark (tailwind.config.js).
// window.keydeckTheme lets the header's toggle read and change the choice.
(function () {
  "use strict";
  var KEY = "keydeck-theme";
  var memo = null; // the choice when storage refuses to keep it
  var media = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  function stored() {
    if (memo !== null) return memo;
    try {
      var v = window.localStorage.getItem(KEY);
      return v === "light" || v === "dark" ? v : "system";
    } catch (e) {
      return "system"; // storage refused (private mode, policy)
    }
  }

  function apply() {
    var choice = stored();
    var dark = choice === "dark" || (choice === "system" && media !== null && media.matches);
    var root = document.documentElement;
    root.classList.toggle("dark", dark);
    root.dataset.theme = choice;
    document.dispatchEvent(new CustomEvent("keydeck:theme", { detail: { choice: choice, dark: dark } }));
  }

  function set(choice) {
    try {
      if (choice === "light" || choice === "dark") {
        window.localStorage.setItem(KEY, choice);
      } else {
        window.localStorage.removeItem(KEY);
      }
    } catch (e) {
      memo = choice === "light" || choice === "dark" ? choice : "system"; // this page only
    }
    apply();
  }

  if (media !== null) {
    media.addEventListener("change", apply);
  }
  // Another tab changed the choice.
  window.addEventListener("storage", function (ev) {
    if (ev.key === KEY) apply();
  });
  window.keydeckTheme = { get: stored, set: set };
  apply();
})();
