/** The status page's style sheet (served as /assets/app.css; the CSP allows no inline style). */
export const APP_CSS = String.raw`:root {
  color-scheme: light dark;
  --bg: #f6f7f9; --panel: #ffffff; --text: #1d2433; --subtle: #667085; --line: #e3e6ec;
  --ok: #137a3a; --ok-bg: #e3f5e9; --bad: #b42318; --bad-bg: #fdecea; --warn: #93600a; --warn-bg: #fdf3dc;
  --accent: #3a5bd9; --chart: #3a5bd9; --budget: #b42318;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #12151b; --panel: #1a1f28; --text: #e6e9ef; --subtle: #98a2b3; --line: #2b3240;
    --ok: #5fd38d; --ok-bg: #173324; --bad: #ff8a80; --bad-bg: #3a1d1d; --warn: #f5c26b; --warn-bg: #3a2f17;
    --accent: #8ea8ff; --chart: #8ea8ff; --budget: #ff8a80;
  }
}
* { box-sizing: border-box; }
body { margin: 0; padding: 0 1.25rem 2rem; background: var(--bg); color: var(--text); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em; }
a { color: var(--accent); }
h1 { font-size: 1.3rem; margin: 0; }
h2 { font-size: 1.05rem; margin: 0 0 0.6rem; }
h3 { font-size: 0.95rem; margin: 1rem 0 0.4rem; }
.top { display: flex; align-items: baseline; gap: 1rem; flex-wrap: wrap; padding: 1rem 0; }
.subtle { color: var(--subtle); font-weight: normal; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 0.9rem 1rem; margin: 0 0 1rem; overflow-x: auto; }
.columns { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 0 1rem; }
@media (max-width: 1000px) { .columns { grid-template-columns: minmax(0, 1fr); } }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 0.3rem 0.5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--subtle); font-size: 0.85em; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.error { color: var(--bad); min-width: 14rem; max-width: 32rem; overflow-wrap: anywhere; }
td.error .subtle { color: var(--subtle); }
.badge { display: inline-block; padding: 0.05rem 0.5rem; border-radius: 999px; font-size: 0.85em; font-weight: 600; background: var(--line); white-space: nowrap; }
.badge.ok { color: var(--ok); background: var(--ok-bg); }
.badge.bad { color: var(--bad); background: var(--bad-bg); }
.badge.warn { color: var(--warn); background: var(--warn-bg); }
.problem { color: var(--bad); }
.problem:empty { display: none; }
.facts { display: flex; gap: 2rem; flex-wrap: wrap; margin: 0; }
.facts dt { color: var(--subtle); font-size: 0.85em; }
.facts dd { margin: 0; font-size: 1.1rem; font-variant-numeric: tabular-nums; }
ul#reasons { margin: 0.6rem 0 0; padding-left: 1.2rem; }
.alerts { list-style: none; margin: 0; padding: 0 0.4rem 0 0; max-height: 34rem; overflow-y: auto; }
.alerts li { padding: 0.5rem 0; border-bottom: 1px solid var(--line); }
.alerts li:last-child { border-bottom: 0; }
.alert-head { display: flex; gap: 0.6rem; flex-wrap: wrap; align-items: baseline; }
.alert-rule { font-weight: 600; }
.alert-summary { margin: 0.2rem 0; overflow-wrap: anywhere; white-space: pre-wrap; }
.deliveries { display: flex; gap: 0.4rem; flex-wrap: wrap; }
.new { animation: flash 2s ease-out; }
@keyframes flash { from { background: var(--warn-bg); } to { background: transparent; } }
.chart svg { width: 100%; height: auto; display: block; }
.chart .axis { stroke: var(--line); stroke-width: 1; }
.chart .spent { fill: none; stroke: var(--chart); stroke-width: 2; }
.chart .area { fill: var(--chart); opacity: 0.12; }
.chart .now { fill: var(--chart); }
.chart .budget { stroke: var(--budget); stroke-width: 1; stroke-dasharray: 4 3; }
.chart text { fill: var(--subtle); font-size: 11px; }
form { display: flex; gap: 0.5rem; align-items: center; flex-wrap: wrap; }
input { font: inherit; padding: 0.3rem 0.5rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--text); min-width: 18rem; }
button { font: inherit; padding: 0.3rem 0.8rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.small { padding: 0.05rem 0.5rem; font-size: 0.85em; white-space: nowrap; }
button[disabled] { opacity: 0.5; cursor: default; }
footer { margin-top: 1rem; }
.trouble { border-color: var(--bad); border-width: 2px; }
.trouble h3:first-of-type { margin-top: 0.4rem; }
ul#reasons { margin: 0 0 0.4rem; }
[hidden] { display: none !important; }
`;
