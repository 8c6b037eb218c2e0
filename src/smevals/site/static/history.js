/* smevals web report: the History page (docs/web-report.md, "History").
 *
 * app.js loads this file the first time a History page is opened and calls
 * window.SMEVALS_HISTORY.page(route, app) with its own helpers (h, s, load, ...).
 * The page draws, for one Eval, the score (mean) or the pass rate of every config × model
 * over the commits that changed its results (data/<eval>/history.js, the shape of
 * `smevals log --format json`): one line per config × model, a band for its 95% interval,
 * a marker where the grader version, the runner or the Tasks changed, damaged commits left
 * out of the lines but listed, and a table of the same data under the chart. A point links
 * to the diff of its commit against its first parent (#/<eval>/diff/<sha>).
 *
 * Safety as in app.js: data reaches the page only through text nodes and attributes;
 * the chart is SVG made with DOM calls; nothing is parsed as HTML.
 */
(function () {
  "use strict";

  const W = 760, H = 300, M = { left: 46, right: 18, top: 30, bottom: 46 };
  const COLORS = ["#2d5fd3", "#c2410c", "#1f7a4d", "#7c3aed", "#b3261e", "#0e7490",
                  "#a16207", "#be185d", "#4b5563", "#15803d"];
  const METRICS = {
    score: { field: "mean", ci: "mean_ci", label: "Score (mean)" },
    "pass-rate": { field: "pass_rate", ci: "pass_rate_ci", label: "Pass rate" },
  };
  const MARKS = { grader: ["G", "grader version changed"], runner: ["R", "runner changed"],
                  tasks: ["T", "Tasks changed"], config: ["C", "config changed"] };

  const key = (row) => `${row.config}\n${row.model}`;
  const isDamaged = (commit, row) => (commit.damage || 0) > 0 || (row !== null && (row.damage || 0) > 0);
  const value = (row, metric) => row[METRICS[metric].field];
  const shown = (v) => v !== null && v !== undefined && Number.isFinite(Number(v));

  function figure(app, metric, v) {
    return metric === "score" ? app.num(v) : app.pct(v);
  }

  /* An interval, clipped to 0..1 as the Eval page's whiskers are. */
  function ciText(app, metric, ci) {
    const clip = (v) => Math.max(0, Math.min(1, Number(v)));
    return ci ? ` [${figure(app, metric, clip(ci[0]))}, ${figure(app, metric, clip(ci[1]))}]` : "";
  }

  function ensureStyle() {
    if (document.querySelector('link[href="history.css"]')) return;
    const el = document.createElement("link");
    el.setAttribute("rel", "stylesheet");
    el.setAttribute("href", "history.css");
    document.head.appendChild(el);
  }

  /* Every config × model of the history: the newest commit's order first, then the pairs
     only older commits have. */
  function seriesOf(commits) {
    const out = new Map();
    for (const c of commits) {
      for (const r of c.rows) {
        if (!out.has(key(r))) out.set(key(r), { key: key(r), config: r.config, model: r.model });
      }
    }
    return [...out.values()].map((x, i) => Object.assign(x, { color: COLORS[i % COLORS.length], index: i }));
  }

  function defaultMetric(data, doc) {
    if (data.ranked_by === "pass_rate") return "pass-rate";
    const anyMean = doc.commits.some((c) => c.rows.some((r) => shown(r.mean)));
    return anyMean ? "score" : "pass-rate";
  }

  async function page(route, app) {
    const { h, enc } = app;
    const [data, doc] = await Promise.all([app.load(`${route.ev}/index`), app.load(`${route.ev}/history`)]);
    ensureStyle();
    if (route.metric && !METRICS[route.metric]) throw new app.Missing(location.hash);
    const metric = route.metric || defaultMetric(data, doc);
    app.crumbs([{ text: "Evals", href: "#/" }, { text: data.name, href: `#/${enc(data.slug)}` },
                { text: "history" }]);
    document.title = `history · ${data.name} · smevals`;
    const series = seriesOf(doc.commits);
    const head = [h("h1", null, `${data.name}: history`),
      doc.error ? h("p", { class: "note bad histerror" }, `Could not read the history: ${doc.error}`) : null,
      summary(app, doc)];
    if (!doc.commits.length) return h("div", { class: "historypage" }, head);
    return h("div", { class: "historypage" }, head,
      app.section(`${METRICS[metric].label} over commits`, toggle(app, data.slug, metric),
        chart(app, data.slug, doc.commits.slice().reverse(), series, metric),
        seriesLegend(app, series), markLegend(app)),
      damagedList(app, data.slug, doc.commits),
      app.section("Table", table(app, data.slug, doc.commits, series)));
  }

  /* What the page lists, said truly: `-n` caps the commits listed (not the commits read),
     and a history shorter than the cap lists every commit that changed something. */
  function summary(app, doc) {
    const { h, plural } = app;
    const n = doc.commits.length;
    const range = doc.range || {};
    const of = `of ${plural(doc.commits_read, "commit")} in the history of HEAD` +
      (range.since ? ` since ${range.since}` : "") + (range.first_parent ? ", first parents only" : "");
    const text = !n ? `No commit changed the results or the Eval, ${of}.`
      : n === range.n ? `The newest ${plural(n, "commit")} that changed the results or the Eval ` +
                        `(at most ${range.n} are listed), ${of}.`
      : `${plural(n, "commit")} changed the results or the Eval, ${of}.`;
    return h("div", null, h("p", { class: "muted small histsummary" }, text),
      doc.shallow ? h("p", { class: "note shallow" }, `This is a shallow clone: only ${plural(doc.commits_read, "commit")} ` +
        "could be read (git fetch --unshallow reads the rest).") : null);
  }

  function toggle(app, slug, metric) {
    const { h, enc } = app;
    return h("p", { class: "histtoggle small", role: "group", "aria-label": "Figure shown" },
      Object.entries(METRICS).map(([name, m]) => h("a", {
        class: `button toggle${name === metric ? " on" : ""}`, href: `#/${enc(slug)}/history/${name}`,
        "aria-current": name === metric ? "true" : null }, m.label)));
  }

  // --- the chart ------------------------------------------------------------------------

  function chart(app, slug, commits, series, metric) {
    const { h, s } = app;
    const pw = W - M.left - M.right, ph = H - M.top - M.bottom, n = commits.length;
    const x = (i) => M.left + (n === 1 ? pw / 2 : (i * pw) / (n - 1));
    const y = (v) => M.top + (1 - Math.max(0, Math.min(1, Number(v)))) * ph;
    const svg = s("svg", { class: "historychart", viewBox: `0 0 ${W} ${H}`, role: "group",
      "aria-label": `${METRICS[metric].label} of each config × model over ${app.plural(n, "commit")}, ` +
        "oldest on the left; the table below holds the same figures" });
    svg.appendChild(axes(app, commits, metric, x, y));
    svg.appendChild(marks(app, commits, x));
    const tip = h("div", { class: "histtip", role: "status", hidden: true });
    const wrap = h("div", { class: "chartwrap" }, svg, tip);
    for (const one of series) {
      const points = pointsOf(commits, one, metric, x, y);
      svg.appendChild(bands(app, one, points));
      svg.appendChild(s("polyline", { class: "line", "data-series": one.key, stroke: one.color,
        points: points.map((p) => `${p.x},${p.y}`).join(" ") }));
    }
    for (const one of series) {
      for (const p of pointsOf(commits, one, metric, x, y)) {
        svg.appendChild(pointView(app, slug, one, p, metric, wrap, tip));
      }
    }
    return wrap;
  }

  /* The points of one config × model, oldest first: commits whose results are damaged, and
     figures that are missing (no score), are left out. */
  function pointsOf(commits, one, metric, x, y) {
    const out = [];
    commits.forEach((c, i) => {
      const row = c.rows.find((r) => key(r) === one.key);
      if (!row || isDamaged(c, row) || !shown(value(row, metric))) return;
      const ci = row[METRICS[metric].ci];
      out.push({ commit: c, row, x: x(i), y: y(value(row, metric)),
                 ci: ci ? [y(ci[1]), y(ci[0])] : null });
    });
    return out;
  }

  /* The interval as a band between consecutive points that have one (a whisker where a
     point stands alone). */
  function bands(app, one, points) {
    const { s } = app;
    const g = s("g", { class: "bands", "data-series": one.key });
    let run = [];
    const flush = () => {
      if (run.length === 1) {
        const p = run[0];
        g.appendChild(s("line", { class: "whisker", stroke: one.color, x1: p.x, x2: p.x, y1: p.ci[0], y2: p.ci[1] }));
      } else if (run.length > 1) {
        const upper = run.map((p) => `${p.x},${p.ci[0]}`);
        const lower = run.slice().reverse().map((p) => `${p.x},${p.ci[1]}`);
        g.appendChild(s("polygon", { class: "band", fill: one.color, points: [...upper, ...lower].join(" ") }));
      }
      run = [];
    };
    for (const p of points) {
      if (p.ci) run.push(p);
      else flush();
    }
    flush();
    return g;
  }

  function axes(app, commits, metric, x, y) {
    const { s } = app;
    const g = s("g", { class: "axes", "aria-hidden": "true" });
    for (const v of [0, 0.25, 0.5, 0.75, 1]) {
      g.appendChild(s("line", { class: "gridline", x1: M.left, x2: W - M.right, y1: y(v), y2: y(v) }));
      g.appendChild(s("text", { class: "ylabel", x: M.left - 6, y: y(v) + 4, "text-anchor": "end" },
        metric === "score" ? v.toFixed(2) : `${Math.round(100 * v)}%`));
    }
    const every = Math.max(1, Math.ceil(commits.length / 12));
    commits.forEach((c, i) => {
      if (i % every && i !== commits.length - 1) return;
      g.appendChild(s("text", { class: "xlabel", x: x(i), y: H - M.bottom + 16, "text-anchor": "middle" }, c.short));
      g.appendChild(s("text", { class: "xdate", x: x(i), y: H - M.bottom + 30, "text-anchor": "middle" },
        String(c.date || "").slice(0, 10)));
    });
    return g;
  }

  /* What changed at a commit, for any config × model of it ("new" is not a change). */
  function changesAt(commit) {
    const out = new Set();
    for (const r of commit.rows) for (const m of r.marks || []) if (MARKS[m]) out.add(m);
    return Object.keys(MARKS).filter((m) => out.has(m));
  }

  function marks(app, commits, x) {
    const { s } = app;
    const g = s("g", { class: "marks" });
    commits.forEach((c, i) => {
      changesAt(c).forEach((m, j) => {
        const [letter, words] = MARKS[m];
        g.appendChild(s("g", { class: `mark mark-${m}`, "data-sha": c.sha },
          s("title", null, `${c.short}: ${words} (${whoChanged(c, m)})`),
          s("line", { x1: x(i), x2: x(i), y1: M.top - 4, y2: H - M.bottom }),
          s("text", { x: x(i) + (j - (changesAt(c).length - 1) / 2) * 11, y: M.top - 10, "text-anchor": "middle" }, letter)));
      });
    });
    return g;
  }

  function whoChanged(commit, mark) {
    return commit.rows.filter((r) => (r.marks || []).includes(mark)).map((r) => `${r.model} (${r.config})`).join(", ");
  }

  function pointView(app, slug, one, p, metric, wrap, tip) {
    const { s, enc } = app;
    const label = pointLabel(app, one, p, metric);
    const attrs = { class: "point", "data-sha": p.commit.sha, "data-series": one.key, "data-model": one.model,
                    "data-config": one.config, "aria-label": label };
    const el = p.commit.diff ? s("a", Object.assign(attrs, { href: `#/${enc(slug)}/diff/${p.commit.sha}` }))
                             : s("g", Object.assign(attrs, { tabindex: 0 }));
    el.appendChild(s("circle", { cx: p.x, cy: p.y, r: 4.5, fill: one.color }));
    const show = () => showTip(app, tip, wrap, el, one, p, metric);
    const hide = () => { tip.hidden = true; highlight(el.ownerSVGElement, null); };
    el.addEventListener("mouseenter", show);
    el.addEventListener("focus", show);
    el.addEventListener("mouseleave", hide);
    el.addEventListener("blur", hide);
    return el;
  }

  function pointLabel(app, one, p, metric) {
    const r = p.row;
    return `${one.model} (${one.config}) at ${p.commit.short} “${p.commit.subject}”: ` +
      `${METRICS[metric].label.toLowerCase()} ${figure(app, metric, value(r, metric))}` +
      ciText(app, metric, r[METRICS[metric].ci]) + `, ${app.plural(r.runs, "Run")}` +
      (p.commit.diff ? "; opens the diff against its parent" : "");
  }

  function showTip(app, tip, wrap, el, one, p, metric) {
    const { h } = app;
    const r = p.row, c = p.commit;
    tip.replaceChildren(...[
      h("strong", { class: "subject" }, c.subject),
      h("div", { class: "meta" }, `${c.short} · ${app.when(c.date)}` + (c.author ? ` · ${c.author}` : "")),
      h("div", { class: "figures" }, `${one.model} (${one.config}): ${figure(app, metric, value(r, metric))}` +
        ciText(app, metric, r[METRICS[metric].ci]) + ` · ${app.plural(r.runs, "Run")} · grader ${r.grader_version || "–"}`),
      changesOf(r).map((text) => h("div", { class: "changes" }, text)),
      h("div", { class: "hint" }, c.diff ? "Click: diff against its parent" : "No diff: no parent commit to compare with"),
    ].flat().filter(Boolean));
    tip.hidden = false;
    highlight(el.ownerSVGElement, one.key);
    const box = wrap.getBoundingClientRect(), at = el.getBoundingClientRect();
    const leftPx = Math.min(Math.max(0, at.left - box.left + 12), Math.max(0, box.width - tip.offsetWidth));
    tip.style.left = `${leftPx}px`;
    const above = at.top - box.top - tip.offsetHeight - 8;
    tip.style.top = `${above >= 0 ? above : at.bottom - box.top + 8}px`;
  }

  /* What changed for this config × model since its previous listed commit, as `diff` says
     it (the words of its marks when the history has no such sentences). */
  function changesOf(r) {
    if (Array.isArray(r.changes) && r.changes.length) return r.changes.map(String);
    return (r.marks || []).map((m) => (m === "new" ? "first appears here" : (MARKS[m] || [m, m])[1]));
  }

  /* Dim every other config × model while one point is hovered or focused. */
  function highlight(svg, seriesKey) {
    if (!svg) return;
    for (const el of svg.querySelectorAll("[data-series]")) {
      el.classList.toggle("dim", seriesKey !== null && el.getAttribute("data-series") !== seriesKey);
    }
  }

  function seriesLegend(app, series) {
    const { h, s } = app;
    return h("ul", { class: "serieslegend small" }, series.map((one) => h("li", null,
      s("svg", { width: 18, height: 10, "aria-hidden": "true" },
        s("line", { x1: 1, x2: 17, y1: 5, y2: 5, stroke: one.color, "stroke-width": 3 })),
      `${one.model} `, h("span", { class: "muted" }, one.config))));
  }

  function markLegend(app) {
    return app.h("p", { class: "muted small" }, "Bands: 95% intervals (score: mean ± 1.96 standard errors, " +
      "clipped to the scores' range 0–1, none over a single score; pass rate: Wilson). Dashed lines mark a commit where, for some config × model, the grader version " +
      "changed (G), the runner changed (R), the Tasks changed (T) or the config changed (C). A point opens the diff of its commit " +
      "against its parent.");
  }

  function damagedList(app, slug, commits) {
    const { h } = app;
    const bad = commits.filter((c) => isDamaged(c, null) || c.rows.some((r) => isDamaged(c, r)));
    if (!bad.length) return null;
    return app.section("Left out of the chart",
      h("p", { class: "small" }, "These commits hold damaged Runs or Grades: their figures are not drawn and " +
        "never counted (`smevals verify` finds the damage)."),
      h("ul", { class: "damaged" }, bad.map((c) => h("li", null, commitLink(app, slug, c), ` ${c.subject} — `,
        `${app.plural(c.damage || Math.max(...c.rows.map((r) => r.damage || 0)), "damaged object")}`))));
  }

  function commitLink(app, slug, c) {
    const { h, enc } = app;
    const code = h("code", null, c.short);
    return c.diff ? h("a", { href: `#/${enc(slug)}/diff/${c.sha}`, title: "diff against its parent" }, code) : code;
  }

  // --- the table (the same data, for screen readers and copying) ---------------------

  function table(app, slug, commits, series) {
    const { h } = app;
    const order = new Map(series.map((x) => [x.key, x.index]));
    const titles = ["Model", "Config", "Runs", "Score (mean) [95% CI]", "Pass rate [95% CI]",
                    "Grader version", "Changes"];
    const rows = [];
    for (const c of commits) {
      rows.push(commitRow(app, slug, c, titles.length));
      const mine = c.rows.slice().sort((a, b) => order.get(key(a)) - order.get(key(b)));
      if (!mine.length) {
        rows.push(h("tr", { class: "pair", "data-sha": c.sha },
          h("td", { colspan: titles.length, class: "muted" }, (c.other_files || []).length
            ? "Changed no figure and no result: the figures are those of the commit below."
            : "No results at this commit.")));
      }
      for (const r of mine) rows.push(pairRow(app, c, r));
    }
    return h("div", { class: "scroll" }, h("table", { class: "board historytable" },
      h("caption", { class: "muted small" }, "Newest first: each commit, then one row per config × model."),
      h("thead", null, h("tr", null, titles.map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", null, rows)));
  }

  function commitRow(app, slug, c, width) {
    const { h } = app;
    return h("tr", { class: "commitrow", "data-sha": c.sha },
      h("th", { colspan: width, scope: "colgroup" }, commitLink(app, slug, c),
        h("span", { class: "muted small" }, ` ${app.when(c.date)}` + (c.author ? ` · ${c.author}` : "")),
        " ", h("span", { class: "subject" }, c.subject),
        c.damage ? h("span", { class: "bad small" }, ` — left out of the chart: ${app.plural(c.damage, "damaged object")}`) : null,
        (c.notes || []).map((n) => h("div", { class: "muted small" }, String(n))),
        (c.other_files || []).length ? h("div", { class: "muted small otherfiles" },
          `Only files that change no figure or result changed: ${otherFiles(c.other_files)}`) : null));
  }

  /* The files of a commit that changed no figure, the first ten named. */
  function otherFiles(files) {
    const shown = files.slice(0, 10).map(String).join(", ");
    return files.length > 10 ? `${shown} and ${files.length - 10} more` : shown;
  }

  function pairRow(app, c, r) {
    const { h } = app;
    const score = shown(r.mean) ? `${app.num(r.mean)}${ciText(app, "score", r.mean_ci)}` : "–";
    const rate = shown(r.pass_rate) ? `${app.pct(r.pass_rate)}${ciText(app, "pass-rate", r.pass_rate_ci)} (${r.passed}/${r.graded})` : "–";
    return h("tr", { class: `pair${r.damage ? " damaged" : ""}`, "data-sha": c.sha },
      h("td", null, r.model), h("td", { class: "muted" }, r.config), h("td", { class: "num" }, String(r.runs)),
      r.damage ? h("td", { colspan: 2, class: "bad" }, `damaged: ${app.plural(r.damage, "object")} (left out)`)
               : [h("td", { class: "num score" }, score), h("td", { class: "num rate" }, rate)],
      h("td", null, h("code", null, r.grader_version || "–")), h("td", { class: "changes small" }, changesOf(r).join("; ")));
  }

  window.SMEVALS_HISTORY = { page };
})();
