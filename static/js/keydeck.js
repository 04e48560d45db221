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
