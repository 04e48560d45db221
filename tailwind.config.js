/** @type {import('tailwindcss').Config} */
module.exports = {
  // Classes live in templ sources and in Go helpers that pick them
  // (fixed-width steps, since the CSP forbids inline styles).
  content: ["./views/**/*.templ", "./views/**/*.go", "./static/js/**/*.js"],
  theme: {
    extend: {
      fontFamily: {
        mono: ["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "monospace"],
      },
    },
  },
  plugins: [],
};
