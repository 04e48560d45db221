// Package views holds the templ layout, components and pages. Its view
// models are plain strings and numbers prepared by handlers (through
// views/format, so a figure reads the same on every page): components
// never see Redis types.
//
// Files are named for what they hold:
//   - layout.templ: the frame of every page (Layout, Page, NavItem);
//   - components_*.templ: pieces several pages share — names of keys and
//     members (components_names), figures (components_stats), connection
//     status (components_status);
//   - page_*.templ: one page each, with its view model and the live
//     fragment the websocket re-renders (the same component renders both);
//   - names.go, keyfield.go, bars.go: the Go helpers the templates call.
package views
