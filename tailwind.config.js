/** @type {import('tailwindcss').Config} */
const plugin = require("tailwindcss/plugin");
const tw = require("tailwindcss/colors");

// Dark mode without a `dark:` variant on every class: the hues the pages
// use are CSS variables, and `html.dark` (set by static/js/theme.js from
// the stored choice or prefers-color-scheme) swaps their values. Accent
// hues mirror their scale (50 <-> 950, 100 <-> 900, …), so a pale banner
// with dark text becomes a deep banner with pale text, and a dark button
// with white text a light button with dark text, keeping each pair's
// contrast. Slate, the page's greys, has its own dark steps: the page
// and panel backgrounds are deep blue-greys and the text steps are lifted
// so that each meets WCAG AA on a panel. `ink` is a fixed dark scale for
// what stays dark in both modes (the header).
const hues = ["slate", "amber", "emerald", "red", "rose", "sky"];
const steps = [50, 100, 200, 300, 400, 500, 600, 700, 800, 900, 950];

const rgb = (hex) => {
  const n = parseInt(hex.slice(1), 16);
  return `${(n >> 16) & 255} ${(n >> 8) & 255} ${n & 255}`;
};

const slateDark = {
  50: "#080d1c", // page
  100: "#1e293b",
  200: "#334155",
  300: "#475569",
  400: "#7c8ba1",
  500: "#94a3b8",
  600: "#cbd5e1",
  700: "#e2e8f0",
  800: "#f1f5f9",
  900: "#f8fafc",
  950: "#ffffff",
};
const whiteDark = "#0f172a"; // a panel

function vars(dark) {
  const out = {};
  for (const hue of hues) {
    steps.forEach((step, i) => {
      let hex = tw[hue][step];
      if (dark) {
        hex = hue === "slate" ? slateDark[step] : tw[hue][steps[steps.length - 1 - i]];
      }
      out[`--${hue}-${step}`] = rgb(hex);
    });
  }
  out["--white"] = rgb(dark ? whiteDark : "#ffffff");
  return out;
}

const colors = {
  transparent: "transparent",
  current: "currentColor",
  inherit: "inherit",
  black: tw.black,
  white: "rgb(var(--white) / <alpha-value>)",
  ink: tw.slate,
};
for (const hue of hues) {
  colors[hue] = {};
  for (const step of steps) {
    colors[hue][step] = `rgb(var(--${hue}-${step}) / <alpha-value>)`;
  }
}

module.exports = {
  // Classes live in templ sources and in Go helpers that pick them
  // (fixed-width steps, since the CSP forbids inline styles).
  content: ["./views/**/*.templ", "./views/**/*.go", "./static/js/**/*.js"],
  darkMode: "class",
  theme: {
    colors,
    extend: {
      // Tailwind's defaults name gray and blue, which this palette lacks.
      borderColor: { DEFAULT: "rgb(var(--slate-200) / <alpha-value>)" },
      ringColor: { DEFAULT: "rgb(var(--sky-500) / <alpha-value>)" },
      fontFamily: {
        mono: ["ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "monospace"],
      },
    },
  },
  plugins: [
    plugin(({ addBase }) => {
      addBase({
        ":root": { ...vars(false), "color-scheme": "light" },
        ":root.dark": { ...vars(true), "color-scheme": "dark" },
      });
    }),
  ],
};
