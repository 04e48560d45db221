// Keydeck's own script. The CSP allows scripts only from 'self', so
// behaviour lives here rather than in attributes.
//
// Copy buttons beside full Redis names (views/names.templ, FullName): copy
// the escaped name shown in the box. One listener on the document, so
// boxes that arrive in websocket fragments work too.
document.addEventListener("click", (ev) => {
  const btn = ev.target.closest("[data-copy-name]");
  if (!btn) return;
  const box = btn.closest("[data-name-box]");
  const text = box && box.querySelector("[data-name-text]");
  if (!text) return;
  const label = btn.textContent;
  const done = (msg) => {
    btn.textContent = msg;
    setTimeout(() => { btn.textContent = label; }, 1500);
  };
  // Without a secure context (plain HTTP on a non-loopback name) there is
  // no clipboard API: select the name so that Ctrl+C copies it.
  const selectIt = () => {
    const range = document.createRange();
    range.selectNodeContents(text);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    done("Selected: press Ctrl+C");
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text.textContent).then(() => done("Copied"), selectIt);
  } else {
    selectIt();
  }
});

// Live fragments replace whole parts of a page, forms included (the key
// page's filter, score window, lookup and jump boxes are in its live
// value panel). What a person is typing survives the swap: every field
// with an id that was edited (or has the focus) hands its value, and the
// focus and caret, to the field with the same id in the new fragment.
let carried = null;
document.addEventListener("htmx:oobBeforeSwap", (ev) => {
  const target = ev.detail && ev.detail.target;
  const frag = ev.detail && ev.detail.fragment;
  if (!target || !frag || !frag.querySelector) return;
  const active = document.activeElement;
  carried = null;
  target.querySelectorAll("input[id], textarea[id]").forEach((el) => {
    const focused = el === active;
    if (!focused && el.value === el.defaultValue) return;
    const twin = frag.querySelector("#" + CSS.escape(el.id));
    if (!twin) return;
    twin.value = el.value;
    if (focused) {
      carried = { id: el.id, start: el.selectionStart, end: el.selectionEnd };
    }
  });
});
document.addEventListener("htmx:oobAfterSwap", () => {
  const c = carried;
  carried = null;
  const el = c && document.getElementById(c.id);
  if (!el) return;
  el.focus();
  try {
    el.setSelectionRange(c.start, c.end);
  } catch (_) {
    // some input types (number) have no selection
  }
});

// A disclosure a person opened ("How this was read") stays open when the
// live fragment holding it is replaced: the new one opens the
// <details> with the same data-testid.
document.addEventListener("htmx:oobBeforeSwap", (ev) => {
  const target = ev.detail && ev.detail.target;
  const frag = ev.detail && ev.detail.fragment;
  if (!target || !frag || !frag.querySelector) return;
  target.querySelectorAll("details[open][data-testid]").forEach((el) => {
    const twin = frag.querySelector('details[data-testid="' + CSS.escape(el.dataset.testid) + '"]');
    if (twin) twin.open = true;
  });
});
