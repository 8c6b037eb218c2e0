/* smevals web report: a hash-routed app over small data files (docs/site.md).
 *
 * Safety: every piece of data (model output, task text, notes, file names) reaches the
 * page through textContent or an attribute set by setAttribute; nothing is ever parsed as
 * HTML. Charts are SVG elements made with DOM calls. Pictures are shown only with <img>
 * (an SVG as its sanitised copy), so no script inside them runs.
 *
 * Data: each page's data is a script, data/<key>.js, that assigns to
 * window.SMEVALS_DATA[<key>]; it is loaded on demand with a <script src> element, which
 * works from file:// (where fetch of local files is blocked) and under the strict
 * Content Security Policy of `smevals serve` (script-src 'self').
 */
(function () {
  "use strict";

  const SVGNS = "http://www.w3.org/2000/svg";
  const store = (window.SMEVALS_DATA = window.SMEVALS_DATA || {});
  const state = { site: null, stamps: null, token: 0, busts: 0 };

  // --- DOM helpers --------------------------------------------------------------------

  function add(el, children) {
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      if (Array.isArray(child)) add(el, child);
      else if (child instanceof Node) el.appendChild(child);
      else el.appendChild(document.createTextNode(String(child)));
    }
    return el;
  }

  function safeHref(url) {
    const text = String(url);
    if (/^(#|files\/|pictures\/)/.test(text)) return text;
    if (/^data:image\/(png|jpeg|gif|webp|avif|bmp|x-icon|svg\+xml);base64,/.test(text)) return text;
    return "#/";
  }

  function setAttrs(el, attrs) {
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (/^on/i.test(key)) throw new Error("event handler attributes are not allowed");
      if (key === "class") el.setAttribute("class", value);
      else if (key === "href" || key === "src") el.setAttribute(key, safeHref(value));
      else el.setAttribute(key, value === true ? "" : String(value));
    }
    return el;
  }

  function h(tag, attrs, ...children) {
    return add(setAttrs(document.createElement(tag), attrs), children);
  }

  function s(tag, attrs, ...children) {
    return add(setAttrs(document.createElementNS(SVGNS, tag), attrs), children);
  }

  function link(href, text, cls) {
    return h("a", { href, class: cls }, text);
  }

  function section(title, ...children) {
    const id = "s-" + title.toLowerCase().replace(/[^a-z0-9]+/g, "-");
    return h("section", { class: "card", id }, h("h2", null, title), ...children);
  }

  function pre(text, cls) {
    return h("pre", { class: cls || "text" }, text);
  }

  function json(value) {
    return pre(JSON.stringify(value, null, 2), "json");
  }

  function folded(summary, ...children) {
    return h("details", null, h("summary", null, summary), ...children);
  }

  // --- formatting ---------------------------------------------------------------------

  const enc = encodeURIComponent;
  const num = (x, d = 2) => (x === null || x === undefined ? "–" : Number(x).toFixed(d));
  const pct = (x) => (x === null || x === undefined ? "–" : `${Math.round(100 * x)}%`);
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const when = (iso) => (iso ? String(iso).replace("T", " ").replace(/\.\d+Z$|Z$/, " UTC") : "");

  function bytes(n) {
    if (n === null || n === undefined) return "";
    if (n < 1024) return `${n} B`;
    if (n < 1048576) return `${(n / 1024).toFixed(1)} KB`;
    return `${(n / 1048576).toFixed(1)} MB`;
  }

  function scoreText(mean, stderr) {
    if (mean === null || mean === undefined) return "–";
    return stderr === null || stderr === undefined ? num(mean) : `${num(mean)} ±${num(stderr)}`;
  }

  /* A mean score over only some of the Runs carries its n: "1.00 ±0.00 (n=7 of 15)". */
  function scoreN(mean, stderr, scored, runs) {
    const text = scoreText(mean, stderr);
    return mean === null || mean === undefined || scored === undefined || scored === runs ? text
      : `${text} (n=${scored} of ${runs})`;
  }

  /* A Grade's score beside its outcome; a failed Grade's score above 0 only with its reason. */
  function gradeScore(score, note) {
    if (score === null || score === undefined) return "";
    return `score ${num(score)}` + (note ? ` (${note})` : "");
  }

  const PASS_RATE_NOTE = "Ranked by pass rate: not every Grade has a score (a failed Check without a " +
    "score leaves its Grade unscored), so a mean score would leave out mostly failures; each score shows its n.";

  function rateBucket(rate) {
    return `pr${Math.round(Math.max(0, Math.min(1, rate)) * 10)}`;
  }

  function badge(status) {
    const labels = { pass: "pass", fail: "fail", failed: "runner failed", stale: "stale",
                     ungraded: "ungraded", older_version: "older grader version",
                     error: "error (no verdict)" };
    return h("span", { class: `badge b-${status}` }, labels[status] || status);
  }

  function chips(tags) {
    if (!tags || !tags.length) return null;
    return h("span", { class: "chips" }, tags.map((t) => h("span", { class: "chip" }, t)));
  }

  const runHref = (ev, id) => `#/${enc(ev)}/run/${enc(id)}`;
  const taskHref = (ev, slug) => `#/${enc(ev)}/task/${enc(slug)}`;

  /* The parts in their own files (explore.js, timeline.js), loaded before this one: each
     registered a function in SMEVALS_PARTS that is given these helpers. */
  const UI = { h, link, section, pre, json, folded, badge, chips, num, pct, plural, bytes,
               scoreN, gradeScore, rateBucket, runHref, taskHref, enc, fileHref, load: (key) => load(key) };
  const parts = {};
  for (const [name, make] of Object.entries(window.SMEVALS_PARTS || {})) parts[name] = make(UI);

  // --- charts (SVG made with DOM calls) -----------------------------------------------

  /* A 0..1 bar with a whisker for the interval [lo, hi]. */
  function bar(value, interval, cls, label) {
    const w = 160, hgt = 16, x = (v) => 1 + Math.max(0, Math.min(1, v)) * (w - 2);
    const chart = s("svg", { class: `bar ${cls}`, width: w, height: hgt, viewBox: `0 0 ${w} ${hgt}`,
                             role: "img", "aria-label": label });
    chart.appendChild(s("rect", { class: "track", x: 0, y: 3, width: w, height: hgt - 6, rx: 2 }));
    if (value !== null && value !== undefined) {
      chart.appendChild(s("rect", { class: "fill", x: 0, y: 3, width: x(value), height: hgt - 6, rx: 2 }));
    }
    if (interval) {
      const [lo, hi] = interval.map(x);
      chart.appendChild(s("line", { class: "whisker", x1: lo, x2: hi, y1: hgt / 2, y2: hgt / 2 }));
      chart.appendChild(s("line", { class: "whisker", x1: lo, x2: lo, y1: 2, y2: hgt - 2 }));
      chart.appendChild(s("line", { class: "whisker", x1: hi, x2: hi, y1: 2, y2: hgt - 2 }));
    }
    chart.appendChild(s("title", null, label));
    return chart;
  }

  /* A delta interval around zero, for the diff page (scale -1..1). */
  function deltaChart(delta, ci) {
    const w = 140, hgt = 16, x = (v) => w / 2 + Math.max(-1, Math.min(1, v)) * (w / 2 - 2);
    const chart = s("svg", { class: "delta", width: w, height: hgt, viewBox: `0 0 ${w} ${hgt}`,
                             role: "img", "aria-label": `delta ${num(delta)}` });
    chart.appendChild(s("line", { class: "zero", x1: w / 2, x2: w / 2, y1: 0, y2: hgt }));
    if (ci) {
      const cls = ci[0] > 0 ? "up" : ci[1] < 0 ? "down" : "flat";
      chart.appendChild(s("line", { class: `ci ${cls}`, x1: x(ci[0]), x2: x(ci[1]), y1: hgt / 2, y2: hgt / 2 }));
    }
    if (delta !== null && delta !== undefined) {
      chart.appendChild(s("circle", { class: "point", cx: x(delta), cy: hgt / 2, r: 3.5 }));
    }
    return chart;
  }

  // --- data ---------------------------------------------------------------------------

  function dataUrl(key) {
    const path = "data/" + key.split("/").map(enc).join("/") + ".js";
    return state.site && state.site.live ? `${path}?v=${++state.busts}` : path;
  }

  class Missing extends Error {}

  function load(key, fresh) {
    if (!fresh && Object.prototype.hasOwnProperty.call(store, key)) return Promise.resolve(store[key]);
    return new Promise((resolve, reject) => {
      const el = document.createElement("script");
      el.src = dataUrl(key);
      el.onload = () => {
        el.remove();
        if (Object.prototype.hasOwnProperty.call(store, key)) resolve(store[key]);
        else reject(new Missing(key));
      };
      el.onerror = () => { el.remove(); reject(new Missing(key)); };
      if (fresh) delete store[key];
      document.head.appendChild(el);
    });
  }

  function forget(prefix) {
    for (const key of Object.keys(store)) {
      if (key === "index" || key.startsWith(prefix + "/")) delete store[key];
    }
  }

  // --- router -------------------------------------------------------------------------

  /* #/  #/<eval>  #/<eval>/tag/<tag>  #/<eval>/task/<task>  #/<eval>/run/<id>  #/<eval>/diff;
   * `/pictures` after an Eval or a tag page shows the grid with thumbnails; a query after
   * `?` (an Eval page's filters and search, explore.js) is kept as `route.query`. */
  function parse(hash) {
    const at = hash.indexOf("?");
    const route = parsePath(at < 0 ? hash : hash.slice(0, at));
    route.query = new URLSearchParams(at < 0 ? "" : hash.slice(at + 1));
    return route;
  }

  function parsePath(hash) {
    const parts = hash.replace(/^#\/?/, "").split("/").filter((p) => p !== "").map((p) => {
      try { return decodeURIComponent(p); } catch (e) { return "/"; }
    });
    if (!parts.length) return { page: "home" };
    if (parts.some((p) => p === "." || p === ".." || /[\/\\]/.test(p))) return { page: "missing" };
    const pictures = parts.length > 1 && parts[parts.length - 1] === "pictures" && parts.length !== 3;
    if (pictures) parts.pop();
    const [ev, what, arg] = parts;
    if (parts.length === 1) return { page: "eval", ev, pictures };
    if (what === "tag" && arg && parts.length === 3) return { page: "eval", ev, tag: arg, pictures };
    if (pictures) return { page: "missing" };
    if (what === "task" && arg) return { page: "task", ev, task: arg };
    if (what === "run" && arg) return { page: "run", ev, run: arg };
    if (what === "diff" && parts.length === 2) return { page: "diff", ev };
    if (what === "diff" && /^[0-9a-f]{40}$/.test(arg || "") && parts.length === 3) return { page: "diff", ev, sha: arg };
    if (what === "history" && parts.length <= 3) return { page: "history", ev, metric: arg };
    return { page: "missing" };
  }

  function crumbs(items) {
    const nav = document.getElementById("crumbs");
    nav.replaceChildren(...items.flatMap((item, i) => [
      i ? h("span", { class: "sep" }, "›") : null,
      item.href ? link(item.href, item.text) : h("span", null, item.text),
    ]).filter(Boolean));
  }

  async function render(keepScroll) {
    const token = ++state.token;
    const route = parse(location.hash);
    const main = document.getElementById("main");
    const y = window.scrollY;
    let view;
    try {
      state.site = state.site || (await load("index"));
      view = await PAGES[route.page](route);
    } catch (err) {
      view = failure(err);
    }
    if (token !== state.token) return;
    main.replaceChildren(view);
    window.scrollTo(0, keepScroll ? y : 0);
  }

  function failure(err) {
    crumbs([{ text: "Not found" }]);
    const text = err instanceof Missing ? `This page is not in the site (no data for “${err.message}”).`
                                        : `Could not show this page: ${err && err.message}`;
    if (!(err instanceof Missing)) console.error(err);
    return h("div", { class: "card" }, h("h1", null, "Not found"), h("p", null, text),
             h("p", null, link("#/", "All Evals")));
  }

  // --- home ---------------------------------------------------------------------------

  async function homePage() {
    const site = (state.site = await load("index"));
    crumbs([{ text: "Evals" }]);
    document.title = "smevals";
    if (!site.evals.length) return h("p", { class: "muted" }, "No Evals in this site.");
    return h("div", null, h("h1", null, "Evals"),
             h("div", { class: "cards" }, site.evals.map(evalCard)),
             h("p", { class: "muted small" }, `Generated ${when(site.generated)}`));
  }

  function evalCard(e) {
    const best = !e.best ? "–" : e.ranked_by === "pass_rate"
      ? `${e.best.model} (${e.best.config}) pass ${pct(e.best.pass_rate)}`
      : `${e.best.model} (${e.best.config}) ${num(e.best.mean)}`;
    return h("a", { class: "card evalcard", href: `#/${enc(e.slug)}` },
      h("h2", null, e.name),
      e.description ? h("p", { class: "muted" }, e.description) : null,
      h("p", null, `${plural(e.runs, "Run")} · ${e.graded} graded · ${e.tasks} tasks · ${e.models} models`),
      e.pass_rate !== null ? bar(e.pass_rate, null, "rate", `pass rate ${pct(e.pass_rate)}`) : null,
      h("span", { class: "small" }, ` ${pct(e.pass_rate)} pass · mean ${scoreN(e.mean, null, e.scored, e.graded)}`),
      h("p", { class: "small muted" }, `Best: ${best}`),
      e.updated ? h("p", { class: "small muted" }, `Updated ${when(e.updated)}`) : null);
  }

  // --- Eval page: leaderboard, grid, tag facets ---------------------------------------

  async function evalPage(route) {
    const data = await load(`${route.ev}/index`);
    const tag = route.tag ? await load(`${route.ev}/tags/${route.tag}`) : null;
    const thumbs = route.pictures && data.pictures ? await load(`${route.ev}/pictures`) : null;
    crumbs([{ text: "Evals", href: "#/" }, { text: data.name, href: route.tag ? `#/${enc(data.slug)}` : null },
            tag ? { text: `tag: ${tag.tag}` } : null].filter(Boolean));
    document.title = `${data.name} · smevals`;
    const shown = tag || data;
    const table = grid(data, shown.grid, thumbs && picturesByCell(thumbs, tag));
    const explore = parts.explore ? parts.explore.evalPage(data, shown, route, tag, table) : null;
    return h("div", null, evalHeader(data), facets(data, tag, route.query.toString()),
      tag ? tagSummary(tag) : null,
      section("Leaderboard", leaderboard(data, shown.leaderboard, shown.ranked_by)),
      explore ? explore.checks : null,
      section("Tasks × models", data.pictures ? picturesToggle(data, tag, route.pictures) : null,
        explore ? explore.bar : null, table, deletedTasks(data)),
      explore ? explore.runs : null,
      metricsTable(shown.leaderboard));
  }

  function evalHeader(data) {
    const sm = data.summary;
    const grader = `grader ${data.grader.name} @ ${data.grader.version}` +
      (data.grader.choice === "current" ? " (current version)" : ` (${data.grader.choice})`);
    const stats = [["Runs", sm.runs], ["Graded", sm.graded], ["Passed", `${sm.passed} (${pct(sm.pass_rate)})`],
      ["Failed", sm.failed], ["Ungraded", sm.ungraded], ["Runner failed", sm.failed_runs_excluded],
      ["Stale", sm.stale_excluded], ["Errors", sm.errored || 0],
      ["Mean score", scoreN(sm.mean, sm.stderr, sm.scored, sm.graded)]];
    if (sm.tampering) stats.push(["Tampering", plural(sm.tampering.runs, "Run")]);
    return h("div", { class: "head" },
      h("h1", null, data.name),
      data.description ? h("p", { class: "lead" }, data.description) : null,
      h("p", { class: "muted small" }, `${grader} · store ${data.store}` + (data.rev ? ` at ${data.rev}` : "") +
        ` · generated ${when(data.generated)}`),
      h("dl", { class: "stats" }, stats.map(([k, v]) => h("div", null, h("dt", null, k), h("dd", null, String(v))))),
      data.notes.length ? h("div", { class: "note" }, data.notes.map((n) => h("p", null, n))) : null,
      sm.tampering ? tamperingNote(data, sm.tampering) : null,
      data.diff ? h("p", null, link(`#/${enc(data.slug)}/diff`, "Diff between revisions →", "button")) : null,
      data.history ? h("p", null, link(`#/${enc(data.slug)}/history`, "History →", "button")) : null);
  }

  /* How many counted Runs carry tampering marks, by kind, with the filter that lists them. */
  function tamperingNote(data, t) {
    const kinds = Object.entries(t.kinds).map(([k, n]) => `${k}: ${n}`).join(", ");
    return h("p", { class: "note bad tampering" },
      `⚠ ${plural(t.runs, "Run")} with tampering (${kinds}): their change touched test machinery or protected paths. `,
      link(`#/${enc(data.slug)}?f=tampering&list=1`, "List them"), ".");
  }

  /* A Grade's tampering marks: each path and its kind. */
  function tamperingView(grade) {
    if (!grade || !grade.tampering || !grade.tampering.length) return null;
    return h("div", { class: "note bad tampering" },
      h("p", null, h("strong", null, "Tampering."), ` This Run's change touched what solving the Task does not: ` +
        `${plural(grade.tampering.length + (grade.tampering_cut || 0), "mark")} in its Grade.`),
      h("ul", { class: "marks" }, grade.tampering.map((m) => h("li", null, h("code", null, m.path), ` ${m.kind}`))),
      grade.tampering_cut ? h("p", { class: "small muted" }, `${grade.tampering_cut} more not listed.`) : null);
  }

  function facets(data, tag, query) {
    if (!data.tags.length) return null;
    const q = query ? `?${query}` : "";       // a tag keeps the filters and search in force
    const all = link(`#/${enc(data.slug)}${q}`, "all", `facet${tag ? "" : " on"}`);
    return h("div", { class: "facets", role: "group", "aria-label": "Filter by tag" },
      h("span", { class: "muted" }, "Tags: "), all,
      data.tags.map((t) => h("a", { class: `facet${tag && tag.slug === t.slug ? " on" : ""}`,
        href: `#/${enc(data.slug)}/tag/${enc(t.slug)}${q}`, title: `${t.count} graded Runs (${pct(t.share)})` },
        t.tag, h("span", { class: "count" }, String(t.count)))));
  }

  function tagSummary(tag) {
    const sm = tag.summary;
    return h("p", { class: "note" }, `Only the ${plural(sm.graded, "graded Run")} tagged “${tag.tag}”: ` +
      `${sm.passed} passed (${pct(sm.pass_rate)}), mean score ${scoreN(sm.mean, sm.stderr, sm.scored, sm.graded)}.`);
  }

  function leaderboard(data, board, rankedBy) {
    if (!board.length) return h("p", { class: "muted" }, "No graded Runs.");
    const byRate = rankedBy === "pass_rate";
    const scoreCell = (g) => h("td", { class: "barcell" },
      bar(g.mean, g.mean_ci, "score", `mean score ${scoreN(g.mean, g.stderr, g.scored, g.runs)}`),
      h("span", { class: "val" }, scoreN(g.mean, g.stderr, g.scored, g.runs)));
    const rateCell = (g) => h("td", { class: "barcell" }, bar(g.pass_rate, g.pass_rate_ci, "rate",
      `pass rate ${pct(g.pass_rate)}, 95% CI ${pct(g.pass_rate_ci[0])}–${pct(g.pass_rate_ci[1])}`),
      h("span", { class: "val" }, `${pct(g.pass_rate)} (${g.passed}/${g.runs})`));
    const titles = byRate ? ["Pass rate", "Mean score"] : ["Mean score", "Pass rate"];
    const head = h("tr", null, ["#", "Model", "Config", ...titles, "Runs"].map(
      (t) => h("th", { scope: "col" }, t)));
    const rows = board.map((g) => h("tr", null,
      h("td", { class: "num" }, String(g.rank)),
      h("td", null, h("strong", null, g.model)),
      h("td", { class: "muted" }, g.config),
      byRate ? [rateCell(g), scoreCell(g)] : [scoreCell(g), rateCell(g)],
      h("td", { class: "num" }, String(g.runs))));
    return h("div", null,
      byRate ? h("p", { class: "note ranked" }, PASS_RATE_NOTE) : null,
      h("div", { class: "scroll" }, h("table", { class: "board leaderboard" }, h("thead", null, head), h("tbody", null, rows))),
      h("p", { class: "muted small" }, "Whiskers: 95% intervals (score: mean ± 1.96 standard errors, " +
        "clipped to the scores' range 0–1, none over a single score; pass rate: Wilson). " + (byRate ? "Ranks are shared when the pass rates are equal."
                                         : "Ranks are shared when the shown scores are equal.")));
  }

  function metricValue(m) {
    if (!m) return "–";
    if (m.kind === "boolean") return pct(m.mean);
    const x = Math.abs(m.mean);
    const digits = x >= 100 ? 0 : x >= 1 ? 2 : 3;
    return m.stderr === null || m.stderr === undefined ? num(m.mean, digits)
                                                       : `${num(m.mean, digits)} ±${num(m.stderr, digits)}`;
  }

  function metricsTable(board) {
    const names = [...new Set(board.flatMap((g) => g.metrics.map((m) => m.name)))].sort();
    if (!names.length) return null;
    const head = h("tr", null, h("th", { scope: "col" }, "Model"), h("th", { scope: "col" }, "Config"),
      names.map((n) => h("th", { scope: "col", class: "num" }, n)));
    const rows = board.map((g) => {
      const byName = Object.fromEntries(g.metrics.map((m) => [m.name, m]));
      return h("tr", null, h("td", null, h("strong", null, g.model)), h("td", { class: "muted" }, g.config),
        names.map((n) => h("td", { class: "num" }, metricValue(byName[n]))));
    });
    return section("Metrics", h("div", { class: "scroll" },
      h("table", { class: "board metrics" }, h("thead", null, head), h("tbody", null, rows))),
      h("p", { class: "muted small" }, "Mean ± standard error over the counted Runs; true/false metrics as the share of true."));
  }

  function picturesToggle(data, tag, on) {
    const base = `#/${enc(data.slug)}` + (tag ? `/tag/${enc(tag.slug)}` : "");
    return h("p", { class: "small" }, on ? link(base, "Hide pictures", "button toggle on")
                                         : link(`${base}/pictures`, "Show pictures", "button toggle"));
  }

  /* task \n config \n model -> the pictures of that cell (in a tag view, of Runs with the tag) */
  function picturesByCell(doc, tag) {
    const out = new Map();
    for (const c of doc.cells) {
      const shown = c.pictures.filter((p) => !tag || (p.tags || []).includes(tag.tag));
      if (shown.length) out.set(`${c.task}\n${c.config}\n${c.model}`, shown);
    }
    return out;
  }

  function thumbsView(data, pics) {
    return h("div", { class: "thumbs" }, pics.map((p) => h("a", { href: runHref(data.slug, p.run),
      class: `thumb t-${p.status}`, title: `${p.path} · ${p.status}` },
      h("img", { src: p.src, alt: p.path, loading: "lazy", decoding: "async" }))));
  }

  function grid(data, g, pictures) {
    if (!g.columns.length) return h("p", { class: "muted" }, "No Runs yet.");
    const slugs = Object.fromEntries(data.tasks.map((t) => [t.name, t.slug]));
    const head = h("tr", null, h("th", { scope: "col", class: "corner" }, "Task"),
      g.columns.map((c) => h("th", { scope: "col" }, h("span", { class: "model" }, c.model),
        h("span", { class: "muted small" }, c.config))));
    const rows = g.tasks.map((task, i) => h("tr", { "data-task": task },
      h("th", { scope: "row" }, link(taskHref(data.slug, slugs[task] || task), task)),
      g.cells[i].map((cell, j) => setAttrs(gridCell(data, task, slugs[task] || task, g.columns[j], cell,
        pictures && pictures.get(`${task}\n${g.columns[j].config}\n${g.columns[j].model}`)), { "data-col": j }))));
    return h("div", null,
      h("div", { class: "scroll" }, h("table", { class: pictures ? "grid pictures" : "grid" },
        h("thead", null, head), h("tbody", null, rows))),
      legend());
  }

  function gridCell(data, task, slug, column, cell, pics) {
    if (!cell) return h("td", { class: "empty" });
    const flaky = cell.class === "flaky";
    const label = `${column.model} (${column.config}) · ${task}: ` + (cell.runs
      ? `${cell.passed} of ${cell.runs} passed, mean ${scoreN(cell.mean, null, cell.scored, cell.runs)}${flaky ? ", flaky" : ""}`
      : "no counted Run") + (cell.excluded ? ` · ${cell.excluded} not counted` : "");
    const cls = cell.runs ? `cell ${rateBucket(cell.passed / cell.runs)}${flaky ? " flaky" : ""}` : "cell none";
    return h("td", { class: cls },
      h("a", { href: taskHref(data.slug, slug), title: label, "aria-label": label },
        cell.runs ? `${cell.passed}/${cell.runs}` : "–",
        flaky ? h("span", { class: "flag", "aria-hidden": "true" }, "◐") : null),
      pics ? thumbsView(data, pics) : null);
  }

  /* Tasks deleted from the Eval whose old Runs are still in the store: not in the grid and
     not counted; each keeps its Task page (its Runs as they recorded it). */
  function deletedTasks(data) {
    const gone = data.tasks.filter((t) => t.current === false);
    if (!gone.length) return null;
    return h("p", { class: "muted small deleted" }, "No longer in the Eval (their Runs are not counted): ",
      gone.map((t, i) => [i ? ", " : "", link(taskHref(data.slug, t.slug), t.name), ` (${plural(t.runs, "Run")})`]));
  }

  function legend() {
    const steps = [0, 2, 4, 6, 8, 10].map((b) => h("span", { class: `swatch pr${b}` }, `${b * 10}%`));
    return h("p", { class: "legend small muted" }, "Pass rate: ", steps, "  ",
      h("span", { class: "swatch flaky" }, "◐"), " flaky (some Runs pass, some fail) · “–”: Runs not counted");
  }

  // --- Task page: the Runs of every model side by side --------------------------------

  async function taskPage(route) {
    const [data, task] = await Promise.all([load(`${route.ev}/index`), load(`${route.ev}/tasks/${route.task}`)]);
    crumbs([{ text: "Evals", href: "#/" }, { text: data.name, href: `#/${enc(data.slug)}` }, { text: task.task }]);
    document.title = `${task.task} · ${data.name} · smevals`;
    const doc = task.doc || {};
    const columns = task.columns.length ? h("div", { class: "columns" }, task.columns.map((c) => taskColumn(data, c)))
                                        : h("p", { class: "muted" }, "No Runs of this task.");
    return h("div", null,
      h("h1", null, task.task),
      task.current ? null : h("p", { class: "note" }, "This task is no longer in the Eval; shown as its Runs recorded it."),
      section("Prompt", promptView(doc.prompt, doc.messages),
        folded("Task document", json(doc))),
      h("h2", null, "Runs by model"),
      parts.explore ? parts.explore.taskPage(data, task, route, columns) : null,
      columns);
  }

  function promptView(prompt, messages) {
    if (typeof prompt === "string") return pre(prompt, "text prompt");
    if (Array.isArray(messages)) {
      return h("div", { class: "messages" }, messages.map((m) => h("div", { class: "message" },
        h("span", { class: "role" }, String((m && m.role) || "")),
        pre(typeof (m && m.content) === "string" ? m.content : JSON.stringify(m && m.content, null, 2)))));
    }
    return h("p", { class: "muted" }, "(no prompt)");
  }

  function taskColumn(data, c) {
    const stats = c.counted ? `${c.passed}/${c.counted} passed · mean ${scoreN(c.mean, null, c.scored, c.counted)}`
                            : "no counted Run";
    const hidden = c.runs.filter((r) => !r.output).length;
    return h("div", { class: "column card" },
      h("h3", null, c.model, h("span", { class: "muted small" }, ` ${c.config}`)),
      h("p", { class: "small" }, stats),
      c.runs.map((r) => (r.output ? runCard(data, r) : runLine(data, r))),
      hidden ? h("p", { class: "muted small" }, `${hidden} more Runs listed without their output.`) : null);
  }

  function runSummary(r) {
    return [badge(r.status), r.score !== null ? h("span", { class: "score" }, gradeScore(r.score, r.score_note)) : null,
      h("span", { class: "muted small" }, `sample ${r.sample ?? "–"}`),
      r.failure ? h("span", { class: "muted small" }, r.failure) : null];
  }

  function runCard(data, r) {
    return h("div", { class: "run", "data-run": r.id }, h("div", { class: "runhead" }, runSummary(r)), chips(r.tags),
      pre(r.output.text + (r.output.truncated ? "\n…" : ""), "text output"),
      link(runHref(data.slug, r.id), "Open Run →", "small"));
  }

  function runLine(data, r) {
    return h("div", { class: "run line", "data-run": r.id }, h("div", { class: "runhead" }, runSummary(r),
      link(runHref(data.slug, r.id), "open →", "small push")), chips(r.tags));
  }

  // --- Run page -----------------------------------------------------------------------

  async function runPage(route) {
    const [data, run] = await Promise.all([load(`${route.ev}/index`), load(`${route.ev}/runs/${route.run}`)]);
    crumbs([{ text: "Evals", href: "#/" }, { text: data.name, href: `#/${enc(data.slug)}` },
            { text: run.task, href: taskHref(data.slug, run.task_slug) }, { text: `${run.model} #${run.sample ?? "–"}` }]);
    document.title = `${run.task} · ${run.model} · smevals`;
    const counted = run.grades.find((g) => g.counts);
    const failure = run.record.failure;
    return h("div", null,
      h("h1", null, `${run.task} `, h("span", { class: "muted" }, "·"), ` ${run.model}`),
      h("p", { class: "runmeta" }, badge(run.status),
        counted && counted.score !== null ? h("span", { class: "score" }, gradeScore(counted.score, counted.score_note)) : null,
        h("span", { class: "muted small" }, `config ${run.config} · sample ${run.sample ?? "–"} · ` +
          `started ${when(run.record.started)} · ${num(run.record.duration_seconds, 1)} s · Run ${run.id}`)),
      failure ? h("p", { class: "note bad" }, `The runner failed (${failure.kind}): ${failure.detail}`) : null,
      tamperingView(counted),
      truncatedNote(run.record.truncated),
      section("Prompt", promptView(run.prompt, run.messages)),
      section("Output", outputView(run.output, fileHref(run.files, "output.txt"))),
      parts.timeline ? parts.timeline.runSections(run) : null,
      run.stderr && run.stderr.text ? section("Stderr", outputView(run.stderr, fileHref(run.files, "stderr.txt"))) : null,
      section("Artifacts", artifactsView(run, counted)),
      section("Checks", counted ? checksView(counted, false) : h("p", { class: "muted" }, "No Grade counts for this Run.")),
      run.labels && run.labels.length ? section("Labels", labelsView(run.labels)) : null,
      section("Grade history", historyView(run.grades)),
      section("Record", recordView(run)));
  }

  function truncatedNote(cut) {
    if (!cut) return null;
    const parts = Object.entries(cut).map(([f, c]) => `${f} kept ${c.kept_bytes} of ${c.written_bytes} bytes`);
    return h("p", { class: "note" }, `Output cut at the cap (config max_output_bytes): ${parts.join("; ")}.`);
  }

  function fileHref(files, path) {
    const f = files.find((x) => x.path === path);
    return f && f.href ? f : null;
  }

  function outputView(out, file) {
    if (!out) return h("p", { class: "muted" }, "(no output.txt)");
    return h("div", null, pre(out.text || "", "text output"),
      out.truncated ? h("p", { class: "muted small" }, "Cut here; the whole file is linked below.") : null,
      file ? h("p", { class: "small" }, h("a", { href: file.href, download: file.download }, "raw file")) : null);
  }

  function artifactsView(run, counted) {
    const mine = run.files.filter((f) => f.path !== "output.txt" && f.path !== "stderr.txt");
    const made = counted ? counted.files.filter((f) => f.path !== "grader.yaml") : [];
    if (!mine.length && !made.length) return h("p", { class: "muted" }, "No files besides the output.");
    return h("div", null, mine.length ? filesView(mine) : null,
      made.length ? h("h3", { class: "sub" }, "Made by the Checks of the Grade that counts") : null,
      made.length ? filesView(made) : null);
  }

  function filesView(files) {
    if (!files.length) return h("p", { class: "muted" }, "No files.");
    return h("div", { class: "files" }, files.map(fileView));
  }

  function fileView(f) {
    const head = h("div", { class: "filehead" }, h("code", null, f.path),
      h("span", { class: "muted small" }, ` ${f.kind}` + (f.size ? ` · ${bytes(f.size)}` : "") +
        (f.width ? ` · ${f.width} × ${f.height}` : "")),
      f.href ? h("a", { class: "small", href: f.href, download: f.download }, "download") : null);
    let body = null;
    if ((f.kind === "image" || f.kind === "svg") && f.src) {
      body = h("img", { src: f.src, alt: f.path, class: "artifact", decoding: "async" });
    } else if (f.not_shown) {
      body = h("p", { class: "muted small notshown" }, `${f.not_shown[0].toUpperCase()}${f.not_shown.slice(1)}.`,
        f.preview ? pre(f.preview.text + (f.preview.truncated ? "\n…" : ""), "text") : null);
    } else if (f.kind === "link") {
      body = h("p", { class: "muted small" }, `symlink → ${f.target} (not followed)`);
    } else if (f.preview) {
      body = pre(f.preview.text + (f.preview.truncated ? "\n…" : ""), "text");
    } else if (f.kind === "binary" || (f.kind === "svg" && !f.src)) {
      body = h("p", { class: "muted small" }, "Not shown here: download it to open it.");
    } else if (f.kind === "unsafe" || f.kind === "missing" || f.kind === "special") {
      body = h("p", { class: "muted small" }, "Not shown (unreadable or not a plain file).");
    }
    return h("div", { class: `file k-${f.kind}` }, head, body);
  }

  function checksView(grade, withFiles) {
    if (!grade.checks.length) return h("p", { class: "muted" }, "No Checks.");
    const head = h("tr", null, ["Check", "Result", "Score", "Notes"].map((t) => h("th", { scope: "col" }, t)));
    const rows = grade.checks.map((c) => {
      const result = c.skipped ? "skipped" : c.ok ? "ok" : c.error ? "error" : "failed";
      const extra = {};
      for (const key of ["details", "metrics", "tags"]) {
        if (c[key] && Object.keys(c[key]).length) extra[key] = c[key];
      }
      return h("tr", null,
        h("td", null, h("strong", null, c.name || c.checker), c.name ? h("div", { class: "muted small" }, c.checker) : null),
        h("td", null, h("span", { class: `badge b-${result === "ok" ? "pass" : result === "failed" ? "fail" : result === "error" ? "error" : "stale"}` }, result)),
        h("td", { class: "num" }, c.score === undefined ? "–" : num(c.score)),
        h("td", null, c.notes ? pre(c.notes, "text notes") : null,
          Object.keys(extra).length ? folded("details", json(extra)) : null));
    });
    return h("div", null,
      h("p", { class: "small muted" }, `Grade ${grade.id} · ${grade.grader} @ ${grade.version} · ` +
        `${grade.outcome} · method ${grade.method || "last"} · graded ${when(grade.graded)}`),
      chips(grade.tags),
      h("div", { class: "scroll" }, h("table", { class: "checks" }, h("thead", null, head), h("tbody", null, rows))),
      withFiles && grade.files.length ? folded(`Grade files (${grade.files.length})`, filesView(grade.files)) : null);
  }

  function labelsView(labels) {
    return h("ul", { class: "labels" }, labels.map((l) => h("li", null, badge(l.outcome),
      ` ${l.by} · ${when(l.graded)}`, l.counts ? h("span", { class: "tag-counts" }, " counts") : null,
      l.note ? h("div", { class: "small" }, l.note) : null)));
  }

  function historyView(grades) {
    if (!grades.length) return h("p", { class: "muted" }, "Never graded.");
    return h("div", { class: "history" }, grades.map((g) => folded(
      h("span", null, badge(g.outcome || "ungraded"), ` ${when(g.graded)} · ${g.grader} @ ${g.version}`,
        g.current ? h("span", { class: "tag-current" }, " current version") : null,
        g.counts ? h("span", { class: "tag-counts" }, " counts") : null,
        g.score === null || g.score === undefined ? "" : ` · ${gradeScore(g.score, g.score_note)}`,
        g.tampering && g.tampering.length ? h("span", { class: "badge b-tampering" }, "tampering") : null),
      tamperingView(g), checksView(g, true))));
  }

  function recordView(run) {
    const r = run.record;
    return h("div", null,
      h("dl", { class: "kv" }, [["Run", run.id], ["Folder", run.rel], ["Exit code", r.exit_code],
        ["Ended", when(r.ended)], ["Inputs hash", r.inputs && r.inputs.hash],
        ["Runner", run.runner]].filter(([k, v]) => k !== "Runner" || v).map(([k, v]) =>
        h("div", null, h("dt", null, k), h("dd", null, v === null || v === undefined ? "–" : String(v))))),
      r.usage ? folded("Usage", json(r.usage)) : null,
      r.usage_error ? h("p", { class: "note" }, `Usage file: ${r.usage_error}`) : null,
      folded("Config", json(run.config_doc)),
      folded("Task document", json(run.task_doc)),
      folded("Provenance", json(r.provenance)));
  }

  // --- Diff page ----------------------------------------------------------------------

  async function diffPage(route) {
    const key = route.sha ? `${route.ev}/diffs/${route.sha}` : `${route.ev}/diff`;
    const [data, doc] = await Promise.all([load(`${route.ev}/index`), load(key)]);
    const d = doc.diff;
    crumbs([{ text: "Evals", href: "#/" }, { text: data.name, href: `#/${enc(data.slug)}` },
            route.sha ? { text: "history", href: `#/${enc(data.slug)}/history` } : null,
            { text: route.sha ? `diff ${route.sha.slice(0, 7)}` : "diff" }].filter(Boolean));
    document.title = `diff · ${data.name} · smevals`;
    return h("div", null,
      h("h1", null, `${data.name}: `, h("code", null, doc.a.label), " → ", h("code", null, doc.b.label)),
      d.explanation ? h("p", { class: "note" }, d.explanation) : null,
      h("p", { class: "muted small" }, `grader ${d.grader} ${d.version_a} → ${d.version_b}` +
        ((d.version_changed_files || []).length ? ` (changed: ${d.version_changed_files.join(", ")})` : "") +
        ` · ${Math.round(100 * doc.ci_level)}% intervals, alpha ${doc.alpha}`),
      leftOut(d),
      section("Models", diffGroups(d, doc.ci_level)),
      diffSplit(d, doc.ci_level),
      section("Flips", diffFlips(data, d), d.flips.length ? h("p", { class: "small" },
        link(`#/${enc(data.slug)}?f=flipped&list=1`, "Their Runs on the Eval page (filter: flipped) →")) : null),
      section("Added and removed", changes(d)));
  }

  /* The Runs each side left out: stale (with the reasons) and errored Grades. */
  function leftOut(d) {
    const side = (s) => (s && s.left_out
      ? `${s.left_out} (` + Object.entries(s.reasons).map(([why, n]) => `${why.replace(/_/g, " ")}: ${n}`).join(", ") + ")"
      : "none");
    const stale = d.stale || {};
    const errored = d.errored;
    return h("p", { class: "small leftout" },
      h("span", { class: "stale" }, `Stale Runs left out: A ${side(stale.a)}; B ${side(stale.b)}.`),
      errored ? h("span", { class: "errored" }, ` Errored Grades left out (no verdict): A ${errored.a}; B ${errored.b}.`) : null);
  }

  /* The paired figures of `smevals diff` (per task, B − A, over the tasks on both sides). */
  function pairedDelta(g) {
    const p = g.paired;
    if (!p) return "–";
    const someScores = (g.a && g.a.scored) || (g.b && g.b.scored);
    if (g.scores_complete === false && someScores) return "– (not every Grade has a score)";
    if (p.mean_delta === null || p.mean_delta === undefined) return "–";
    return (p.mean_delta > 0 ? "+" : "") + num(p.mean_delta) +
      (p.ci ? ` [${num(p.ci[0])}, ${num(p.ci[1])}]` : "") + ` (${plural(p.scored, "task")})`;
  }

  /* B's cell is marked up or down only when its value differs from A's: a cell that did not
     change is never coloured as a change. */
  function moved(a, b) {
    if (a === null || a === undefined || b === null || b === undefined || Number(a) === Number(b)) return "";
    return Number(b) > Number(a) ? " up" : " down";
  }

  /* One row per config × model; the verdict comes third, so that it is in view at 1400 px
     whatever the width of the figures after it. */
  function diffGroups(d, level) {
    const head = h("tr", null, ["Model", "Config", "Verdict", "A score", "B score",
      `Δ score, paired (${Math.round(100 * level)}% CI)`, "A pass", "B pass",
      "Pass → fail / fail → pass", "McNemar p"].map((t) => h("th", { scope: "col" }, t)));
    const side = (x) => (x ? scoreN(x.mean, x.stderr, x.scored, x.runs) : "–");
    const rate = (x) => (x ? `${pct(x.pass_rate)} (${x.passed}/${x.runs})` : "–");
    const rows = d.groups.map((g) => {
      const p = g.paired || {};
      const complete = g.scores_complete !== false;
      const a = g.a || {}, b = g.b || {};
      return h("tr", { class: `v-${String(g.verdict).split(/[ :;]/)[0]}` },
        h("td", null, h("strong", null, g.model)), h("td", { class: "muted" }, g.config),
        h("td", { class: "verdict" }, String(g.verdict)),
        h("td", { class: "num score-a" }, side(g.a)),
        h("td", { class: "num score-b" + (complete ? moved(a.mean, b.mean) : "") }, side(g.b)),
        h("td", { class: "num delta" }, pairedDelta(g),
          complete && g.paired ? deltaChart(p.mean_delta, p.ci) : null),
        h("td", { class: "num pass-a" }, rate(g.a)),
        h("td", { class: "num pass-b" + moved(a.pass_rate, b.pass_rate) }, rate(g.b)),
        h("td", { class: "num moves" }, g.paired ? `${p.regressions} / ${p.fixes}` : "–"),
        h("td", { class: "num p" }, g.paired ? `${num(p.p, 3)} (${plural(p.tasks, "task")})` : "–"));
    });
    return h("div", null,
      h("div", { class: "scroll" }, h("table", { class: "board groups" }, h("thead", null, head), h("tbody", null, rows))),
      h("p", { class: "muted small" }, "Scores are compared only when every Grade on both sides has one. " +
        "Δ score: the mean over the tasks on both sides of each task's score change, with its paired bootstrap interval."));
  }

  /* Where the grader version changed: which part of each change the grader made (the same
     Runs graded by both versions) and which the evidence made (A's Runs against B's, both
     under B's grader), as `smevals diff` says it. */
  function diffSplit(d, level) {
    const groups = d.groups.filter((g) => g.split);
    if (!groups.length) return null;
    const ci = (x) => (x.mean_delta === null || x.mean_delta === undefined ? "–"
      : `${x.mean_delta > 0 ? "+" : ""}${num(x.mean_delta)}` + (x.ci ? ` [${num(x.ci[0])}, ${num(x.ci[1])}]` : ""));
    const pts = (x) => `${x > 0 ? "+" : ""}${(100 * x).toFixed(1)} pts`;
    const head = h("tr", null, ["Model", "Config", "Runs paired", `Grader: Δ score (${Math.round(100 * level)}% CI)`,
      "Grader: Δ pass", "McNemar p", "Evidence: Runs A / B", `Evidence: Δ score (${Math.round(100 * level)}% CI)`,
      "Evidence: Δ pass", "Fisher p"].map((t) => h("th", { scope: "col" }, t)));
    const rows = groups.filter((g) => g.split.available).map((g) => {
      const gr = g.split.grader, ev = g.split.evidence;
      return h("tr", { "data-model": g.model, "data-config": g.config },
        h("td", null, h("strong", null, g.model)), h("td", { class: "muted" }, g.config),
        h("td", { class: "num" }, `${gr.runs} of ${gr.of}`),
        h("td", { class: "num g-score" }, ci(gr)), h("td", { class: "num g-pass" }, pts(gr.pass_rate_delta)),
        h("td", { class: "num" }, num(gr.p, 3)), h("td", { class: "num" }, `${ev.runs_a} / ${ev.runs_b}`),
        h("td", { class: "num e-score" }, ci(ev)), h("td", { class: "num e-pass" }, pts(ev.pass_rate_delta)),
        h("td", { class: "num" }, num(ev.p, 3)));
    });
    return section("Grader and evidence",
      h("p", { class: "small" }, "The grader version changed, so each change is split in two: what the grader did " +
        "(the same Runs of A graded by A's grader and by B's, each paired with itself) and what the evidence did " +
        "(A's Runs against B's, both graded by B's grader). A drop or a gain in the verdict is the evidence's."),
      h("ul", { class: "splits" }, groups.map((g) => h("li", { "data-model": g.model, "data-config": g.config },
        h("strong", null, `${g.model} (${g.config}): `),
        g.split.available ? String(g.split.text) : `not split: ${g.split.reason}`))),
      rows.length ? h("div", { class: "scroll" }, h("table", { class: "board splitfigures" },
        h("thead", null, head), h("tbody", null, rows))) : null);
  }

  const CAUSES = { regraded: "regraded: the same Runs", different_runs: "different Runs" };

  function diffFlips(data, d) {
    if (!d.flips.length) return h("p", { class: "muted" }, "No task changed between pass and fail.");
    const shownScore = (r) => (r.score === null || r.score === undefined ? "" : ` ${num(r.score)}`) +
      (r.score_note ? ` (${r.score_note})` : "");
    const runs = (items) => items.map((r, i) => [i ? ", " : "", link(runHref(data.slug, r.run_id), `${r.outcome}${shownScore(r)}`)]);
    return h("div", { class: "scroll" }, h("table", { class: "board flips" },
      h("thead", null, h("tr", null, ["Task", "Model", "Change", "Cause", "Runs in A", "Runs in B"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", null, d.flips.map((f) => h("tr", null,
        h("td", null, link(taskHref(data.slug, (data.tasks.find((t) => t.name === f.task) || { slug: f.task }).slug), f.task)),
        h("td", null, `${f.model} (${f.config})`),
        h("td", null, h("span", { class: `badge b-${f.direction === "pass->fail" ? "fail" : "pass"}` }, f.direction.replace("->", " → "))),
        h("td", { class: "muted cause" }, CAUSES[f.cause] || String(f.cause).replace(/_/g, " ")),
        h("td", null, runs(f.a)), h("td", null, runs(f.b)))))));
  }

  /* What B has that A has not, and the reverse: Runs counted per model (not every id),
     tasks, models and configs by name. */
  function changes(d) {
    const pairs = (c) => {
      const items = c.runs_by_pair || [];
      if (!c.runs || !c.runs.length) return null;
      const per = items.map((x) => `${x.model} (${x.config}): ${x.runs}`).join(", ");
      return h("p", { class: "small runs" }, `${plural(c.runs.length, "Run")}` + (per ? ` — ${per}` : ""));
    };
    const list = (title, c) => h("div", null, h("h3", null, title), pairs(c), ["tasks", "models", "configs"].map(
      (k) => (c[k] && c[k].length ? h("p", { class: "small" }, `${k}: ${c[k].join(", ")}`) : null)));
    const empty = (c) => !["runs", "tasks", "models", "configs"].some((k) => c[k] && c[k].length);
    if (empty(d.added) && empty(d.removed)) return h("p", { class: "muted" }, "Nothing was added or removed.");
    return h("div", { class: "twocol" }, list("Added in B", d.added), list("Removed in B", d.removed));
  }

  /* The History page lives in history.js, loaded on first use (docs/web-report.md). */
  async function historyPage(route) {
    if (!window.SMEVALS_HISTORY) await script("history.js");
    return window.SMEVALS_HISTORY.page(route, { h, s, link, section, crumbs, load, enc, num, pct, when, plural, Missing });
  }

  function script(src) {
    return new Promise((resolve, reject) => {
      const el = document.createElement("script");
      el.src = src;
      el.onload = resolve;
      el.onerror = () => reject(new Error(`cannot load ${src}`));
      document.head.appendChild(el);
    });
  }

  const PAGES = { home: homePage, eval: evalPage, task: taskPage, run: runPage, diff: diffPage,
                  history: historyPage, missing: () => Promise.reject(new Missing(location.hash)) };

  // --- live updates (smevals serve) ---------------------------------------------------

  async function poll() {
    let stamps;
    try {
      stamps = await load("stamp", true);
    } catch (e) {
      document.getElementById("live").classList.add("off");
      return;
    }
    document.getElementById("live").classList.remove("off");
    const before = state.stamps || stamps;
    state.stamps = stamps;
    const errors = Object.values(stamps).map((s) => s.error).filter(Boolean);
    const banner = document.getElementById("banner");
    banner.hidden = !errors.length;
    banner.replaceChildren(...errors.map((e) => h("p", null, `Showing the last good reading: ${e}`)));
    const changed = Object.keys(stamps).filter((k) => !before[k] || before[k].stamp !== stamps[k].stamp);
    if (!changed.length) return;
    changed.forEach(forget);
    state.site = await load("index", true);
    const route = parse(location.hash);
    if (route.page === "home" || changed.includes(route.ev)) render(true);
  }

  async function boot() {
    window.addEventListener("hashchange", () => render(false));
    try {
      state.site = await load("index");
    } catch (e) {
      state.site = { evals: [], live: false };
    }
    await render(false);
    if (state.site.live) {
      document.getElementById("live").hidden = false;
      state.stamps = await load("stamp", true).catch(() => null);
      window.setInterval(poll, 1000 * (state.site.poll_seconds || 3));
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", boot);
  else boot();
})();
