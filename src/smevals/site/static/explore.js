/* smevals web report: exploring an Eval page (docs/web-report.md, "Exploring the results").
 *
 * Filters (failures, errors, flaky, flipped in the diff, tampering, one Check failing; a tag is
 * the tag page itself), a text search over Task names and whole outputs (an index built with
 * the site, data/<eval>/search.js, loaded when a search is typed), a list of
 * the matching Runs, the Checks table and the grid coloured by one Check. The state lives
 * in the address after `?` (`#/qa?f=fail,flaky&check=contains&q=paris&color=tone`), so a
 * link keeps it and a reload restores it; it is changed with history.replaceState, which
 * redraws nothing but the parts that depend on it.
 *
 * The Runs' lines (data/<eval>/explore.js) are loaded only when a filter, the search, the
 * list or a colour is used, so the page of a big Eval opens as quickly as without them.
 * Every text reaches the page through the app's h() (text nodes and setAttribute).
 */
(window.SMEVALS_PARTS = window.SMEVALS_PARTS || {}).explore = function (ui) {
  "use strict";

  const { h, section, link, badge, chips, num, pct, plural, rateBucket, runHref, taskHref } = ui;
  const FILTERS = [
    ["fail", "Failures", "Runs whose Grade that counts failed"],
    ["error", "Errors", "Runs whose runner failed or whose Grade is an error (no verdict)"],
    ["flaky", "Flaky", "Runs of a Task × model cell whose Runs disagree (some pass, some fail)"],
    ["flipped", "Flipped in the diff", "Runs of a Task × model that flipped between the diff's revisions"],
    ["tampering", "Tampering", "Runs whose Grade marks tampering: their change touched test machinery or protected paths"],
  ];
  const PAGE = 100;                  // Runs listed at a time

  function readState(query) {
    const known = new Set(FILTERS.map((f) => f[0]));
    return { f: new Set((query.get("f") || "").split(",").filter((x) => known.has(x))),
             check: query.get("check") || "", color: query.get("color") || "",
             q: query.get("q") || "", list: query.get("list") === "1" };
  }

  function queryOf(st) {
    const q = new URLSearchParams();
    const f = FILTERS.map((x) => x[0]).filter((x) => st.f.has(x));
    if (f.length) q.set("f", f.join(","));
    if (st.check) q.set("check", st.check);
    if (st.q) q.set("q", st.q);
    if (st.color) q.set("color", st.color);
    if (st.list) q.set("list", "1");
    return q.toString();
  }

  const filtering = (st) => st.f.size > 0 || st.check !== "" || st.q !== "";
  const needsRuns = (st) => filtering(st) || st.list || st.color !== "";

  /* Whether a Run line (at position i of the explore data) passes every filter in force
     (and the tag of a tag page). The search matches a Task name containing it, or an
     output holding every word of it (within a word: `hits`, from the index of whole
     outputs; without the index, the start of the output kept in the line). */
  function matcher(st, doc, tag, index) {
    const check = doc.checks.indexOf(st.check);
    const words = st.q.toLowerCase();
    const hits = words && index ? searchHits(index, st.q, doc.runs.length) : null;
    const inOutput = (r, i) => (hits ? hits.has(i) : r.excerpt.toLowerCase().includes(words));
    return (r, i) => (!st.f.has("fail") || r.status === "fail") &&
      (!st.f.has("error") || r.status === "error" || r.status === "failed") &&
      (!st.f.has("flaky") || r.flaky) && (!st.f.has("flipped") || r.flipped) &&
      (!st.f.has("tampering") || r.tampering > 0) &&
      (!st.check || (check >= 0 && (r.checks[check] === "f" || r.checks[check] === "e"))) &&
      (!tag || r.tags.includes(tag.tag)) &&
      (!words || r.task.toLowerCase().includes(words) || inOutput(r, i));
  }

  // --- the search's index (data/<eval>/search.js, search.py) ---------------------------

  const WORD = /[\p{L}\p{N}_]+/gu;
  const wordsOf = (text, max) => (text.toLowerCase().match(WORD) || []).map((w) => w.slice(0, max));

  /* The positions of the Runs holding a word of the index (decoded once). */
  function postings(index, word) {
    index.decoded = index.decoded || new Map();
    let found = index.decoded.get(word);
    if (found) return found;
    const value = index.words[word];
    found = [];
    if (value.startsWith("~")) {
      const bits = atob(value.slice(1));
      for (let i = 0; i < index.runs; i++) if (bits.charCodeAt(i >> 3) >> (i & 7) & 1) found.push(i);
    } else {
      let last = -1;
      for (const gap of value.split(",")) { last += parseInt(gap, 36) + 1; found.push(last); }
    }
    index.decoded.set(word, found);
    return found;
  }

  /* The Runs whose output holds, for each word searched, a word containing it; null when
     the search has no word (or the index is not this explore data's). */
  function searchHits(index, q, runs) {
    const words = wordsOf(q, index.word_chars);
    if (!words.length || index.runs !== runs) return null;
    index.vocabulary = index.vocabulary || Object.keys(index.words);
    let hits = null;
    for (const w of words) {
      const found = new Set();
      for (const token of index.vocabulary) {
        if (token.includes(w)) for (const i of postings(index, token)) if (!hits || hits.has(i)) found.add(i);
      }
      hits = found;
      if (!hits.size) break;
    }
    return hits;
  }

  // --- the Checks table ---------------------------------------------------------------

  /* A Check's figures in one column: the text `smevals report` prints for them
     (`71% (12/17), mean 0.71 ±0.05, 1 error`), coloured by the pass rate. */
  function checkCell(c) {
    if (!c) return h("td", { class: "empty" }, "–");
    return h("td", { class: "checkcell" + (c.pass_rate === null ? "" : ` ${rateBucket(c.pass_rate)}`),
                     title: `${c.runs} Grades: ${c.passed} passed, ${c.failed} failed, ${c.errors} errors, ${c.skipped} skipped` },
      c.text);
  }

  /* Shown, like report's Checks table, only when the Grades have several Checks: with one,
     its figures are the Grades' own. */
  function checksSection(shown, colour) {
    const table = shown.checks || [];
    if (table.length < 2) return null;
    const columns = shown.grid.columns;
    const head = h("tr", null, h("th", { scope: "col" }, "Check"), columns.map((c) =>
      h("th", { scope: "col" }, h("span", { class: "model" }, c.model), " ", h("span", { class: "muted small" }, c.config))));
    const rows = table.map((row) => h("tr", { "data-check": row.check },
      h("th", { scope: "row" }, h("strong", null, row.check), " ",
        h("button", { type: "button", class: "linkish small colourby", title: `Colour the grid by ${row.check}` }, "colour the grid")),
      row.columns.map(checkCell)));
    rows.forEach((tr, i) => tr.querySelector("button").addEventListener("click", () => colour(table[i].check)));
    return section("Checks",
      h("div", { class: "scroll" }, h("table", { class: "board checktable" }, h("thead", null, head), h("tbody", null, rows))),
      h("p", { class: "muted small" }, "Per config × model, as in smevals report: over the Grades that count " +
        "(and the errored ones), the share of passes among the Check's verdicts (passed / (passed + failed)), " +
        "its mean score where it says more than the pass rate, its errors (no verdict) and skips."));
  }

  // --- the controller -----------------------------------------------------------------

  function evalPage(data, shown, route, tag, table) {
    const st = readState(route.query);
    const names = (shown.checks || []).map((c) => c.check);
    if (names.length < 2 || !names.includes(st.check)) st.check = "";   // unknown: ignored
    if (names.length < 2) st.color = "";
    if (!names.includes(st.color)) st.color = "";
    const ctl = { st, doc: null, loading: null, limit: PAGE, data, shown, tag, table };
    ctl.status = h("p", { class: "small muted explore-status", role: "status" });
    ctl.runsBody = h("div", { class: "runlist" });
    ctl.bar = filterBar(ctl);
    ctl.checks = checksSection(shown, (name) => { st.color = name; update(ctl); });
    ctl.runs = section("Runs", ctl.runsBody);
    for (const cell of table.querySelectorAll("td[data-col]")) cell.dataset.cls = cell.getAttribute("class") || "";
    ctl.legend = table.querySelector(".legend");
    if (ctl.legend) ctl.legendOriginal = [...ctl.legend.childNodes];
    update(ctl, true);
    return { bar: ctl.bar, checks: ctl.checks, runs: ctl.runs };
  }

  function filterBar(ctl) {
    const st = ctl.st;
    const tampered = Boolean(ctl.data.summary && ctl.data.summary.tampering);
    const toggles = FILTERS.filter(([key]) => (key !== "flipped" || ctl.data.diff) &&
                                              (key !== "tampering" || tampered)).map(([key, label, title]) => {
      const b = h("button", { type: "button", class: `facet filter f-${key}${st.f.has(key) ? " on" : ""}`,
                              "aria-pressed": st.f.has(key) ? "true" : "false", title }, label);
      b.addEventListener("click", () => {
        if (st.f.has(key)) st.f.delete(key); else st.f.add(key);
        b.classList.toggle("on", st.f.has(key));
        b.setAttribute("aria-pressed", st.f.has(key) ? "true" : "false");
        update(ctl);
      });
      return b;
    });
    const names = (ctl.shown.checks || []).map((c) => c.check);
    const several = names.length > 1;
    const failing = select("check", "Check failing", names, st.check, "any", (v) => { st.check = v; update(ctl); });
    const colours = select("color", "Colour by", names, st.color, "pass rate", (v) => { st.color = v; update(ctl); });
    const search = h("input", { type: "search", name: "q", class: "search", placeholder: "Search Task names and outputs",
                                "aria-label": "Search Task names and outputs", value: st.q });
    let timer = 0;
    search.addEventListener("input", () => {
      window.clearTimeout(timer);
      timer = window.setTimeout(() => { st.q = search.value.trim(); update(ctl); }, 150);
    });
    const clear = h("button", { type: "button", class: "linkish small clear" }, "clear");
    clear.addEventListener("click", () => {
      st.f.clear(); st.check = ""; st.q = ""; st.color = ""; st.list = false;
      search.value = ""; failing.querySelector("select").value = ""; colours.querySelector("select").value = "";
      ctl.bar.querySelectorAll("button.filter").forEach((b) => { b.classList.remove("on"); b.setAttribute("aria-pressed", "false"); });
      update(ctl);
    });
    ctl.colourSelect = colours.querySelector("select");
    return h("div", { class: "explore", role: "search" },
      h("div", { class: "facets filters", role: "group", "aria-label": "Filters" },
        h("span", { class: "muted" }, "Show: "), toggles, several ? failing : null, clear),
      h("div", { class: "facets" }, search, several ? colours : null),
      ctl.status);
  }

  function select(name, label, names, value, none, changed) {
    const el = h("select", { name, "aria-label": label },
      h("option", { value: "" }, none),
      names.map((n) => h("option", { value: n, selected: n === value }, n)));
    el.addEventListener("change", () => changed(el.value));
    return h("label", { class: "small pick" }, `${label}: `, el);
  }

  /* Write the state into the address, load the Runs' lines when first needed, redraw. */
  function update(ctl, first) {
    const st = ctl.st;
    if (!first) {
      const base = location.hash.split("?")[0] || "#/";
      const query = queryOf(st);
      history.replaceState(null, "", base + (query ? `?${query}` : ""));
      ctl.limit = PAGE;
    }
    if (ctl.colourSelect) ctl.colourSelect.value = st.color;
    if (!needsRuns(st)) { draw(ctl); return; }
    if (ctl.doc && (!st.q || ctl.index !== undefined)) { draw(ctl); return; }
    ctl.status.textContent = st.q ? "Loading the Runs and the search's index…" : "Loading the Runs…";
    ctl.loading = ctl.loading || ui.load(`${ctl.data.slug}/explore`).then((doc) => { ctl.doc = doc; })
      .catch(() => { ctl.failed = true; });
    const ready = st.q ? Promise.all([ctl.loading, loadIndex(ctl.data.slug, ctl)]) : ctl.loading;
    ready.then(() => draw(ctl));
  }

  /* The search's index, once (null when the site has none: the search then looks at the
     start of each output only). */
  function loadIndex(slug, holder) {
    holder.indexing = holder.indexing || ui.load(`${slug}/search`).then((index) => { holder.index = index; })
      .catch(() => { holder.index = null; });
    return holder.indexing;
  }

  function draw(ctl) {
    const { st, doc } = ctl;
    if (ctl.failed) {
      ctl.status.textContent = "The Runs of this Eval are not in the site (no explore data): filters and search are off.";
      return;
    }
    const runs = doc && needsRuns(st) ? doc.runs.filter(matcher(st, doc, ctl.tag, ctl.index)) : null;
    const listed = filtering(st) || st.list ? runs : null;     // a colour alone lists nothing
    drawGrid(ctl, runs);
    drawStatus(ctl, listed);
    drawList(ctl, listed);
    // the tag facets keep the filters (app.js sets them at first), and so do the links to
    // the Task pages, which then show only the matching Runs
    const query = queryOf(st);
    const links = [...document.querySelectorAll("a.facet[href]"), ...ctl.table.querySelectorAll("a[href]"),
                   ...ctl.runsBody.querySelectorAll("a[href*='/task/']")];
    for (const a of links) {
      const href = a.getAttribute("href").split("?")[0];
      a.setAttribute("href", href + (query && (!href.includes("/task/") || filtering(st)) ? `?${query}` : ""));
    }
  }

  function drawStatus(ctl, runs) {
    const { st, doc } = ctl;
    const parts = [];
    if (runs) {
      const tasks = new Set(runs.map((r) => r.task)).size;
      parts.push(filtering(st) ? `${plural(runs.length, "Run")} of ${doc.runs.length} match` +
        ` (${plural(tasks, "task")}).` : `${plural(runs.length, "Run")}.`);
    }
    if (st.q && ctl.index) parts.push("The search looks at Task names and at the whole of each Run's output: " +
      "a Run matches when its output holds every word searched (as part of a word); prompts and notes are not searched.");
    else if (st.q) parts.push(`The search looks at Task names and the first ${doc.excerpt_chars} characters of each ` +
      "Run's output (this site has no index of whole outputs); prompts and notes are not searched.");
    if (st.color && doc) parts.push(`Grid coloured by the Check “${st.color}”: the share of the counted Runs of each cell whose Check passed.`);
    ctl.status.textContent = parts.join(" ");
  }

  // --- the grid -----------------------------------------------------------------------

  function drawGrid(ctl, runs) {
    const { st, doc, shown } = ctl;
    const columns = shown.grid.columns;
    const colOf = new Map(columns.map((c, j) => [`${c.config}\n${c.model}`, j]));
    const hits = new Map();          // task \n col -> matching Runs
    for (const r of runs || []) {
      const key = `${r.task}\n${colOf.get(`${r.config}\n${r.model}`)}`;
      hits.set(key, (hits.get(key) || 0) + 1);
    }
    const byCell = st.color && doc ? verdictsByCell(doc, st.color, colOf) : null;
    for (const tr of ctl.table.querySelectorAll("tbody tr[data-task]")) {
      const task = tr.getAttribute("data-task");
      let any = false;
      for (const td of tr.querySelectorAll("td[data-col]")) {
        const key = `${task}\n${td.getAttribute("data-col")}`;
        const hit = hits.has(key);
        any = any || hit;
        td.setAttribute("class", td.dataset.cls);
        if (byCell) colourCell(td, byCell.get(key), st.color);
        else restoreCell(td);
        if (runs && filtering(st) && !hit) td.classList.add("dim");
      }
      tr.hidden = Boolean(runs && filtering(st) && !any);
    }
    drawLegend(ctl, Boolean(byCell));
  }

  function verdictsByCell(doc, name, colOf) {
    const i = doc.checks.indexOf(name);
    const out = new Map();
    if (i < 0) return out;
    for (const r of doc.runs) {
      if (r.status !== "pass" && r.status !== "fail") continue;
      const key = `${r.task}\n${colOf.get(`${r.config}\n${r.model}`)}`;
      const v = out.get(key) || { p: 0, f: 0, e: 0, s: 0, "-": 0 };
      v[r.checks[i]] = (v[r.checks[i]] || 0) + 1;
      out.set(key, v);
    }
    return out;
  }

  function colourCell(td, v, name) {
    const a = td.querySelector("a");
    if (!a) return;
    if (!a.dataset.text) a.dataset.text = a.textContent;
    const verdicts = v ? v.p + v.f : 0;
    td.classList.remove(...[...td.classList].filter((c) => /^pr\d+$/.test(c) || c === "flaky"));
    td.classList.add("bycheck", verdicts ? rateBucket(v.p / verdicts) : "none");
    a.textContent = verdicts ? `${v.p}/${verdicts}` : "–";
    const more = v ? [v.e ? `${v.e} error` : "", v.s ? `${v.s} skipped` : ""].filter(Boolean).join(", ") : "";
    a.setAttribute("title", `${name}: ` + (verdicts ? `passed in ${v.p} of ${verdicts} counted Runs` : "no verdict") +
      (more ? ` (${more})` : ""));
  }

  function restoreCell(td) {
    const a = td.querySelector("a");
    if (a && a.dataset.text !== undefined) {
      a.textContent = a.dataset.text;
      delete a.dataset.text;
      a.setAttribute("title", a.getAttribute("aria-label") || "");
    }
  }

  function drawLegend(ctl, byCheck) {
    if (!ctl.legend) return;
    if (!byCheck) { ctl.legend.replaceChildren(...ctl.legendOriginal); return; }
    const steps = [0, 2, 4, 6, 8, 10].map((b) => h("span", { class: `swatch pr${b}` }, `${b * 10}%`));
    ctl.legend.replaceChildren(`Check “${ctl.st.color}” passed in: `, ...steps,
      " of the cell's counted Runs · “–”: no verdict (skipped, error or not run)");
  }

  // --- the Run list -------------------------------------------------------------------

  function drawList(ctl, runs) {
    const { st, data } = ctl;
    if (!runs) {
      const all = h("button", { type: "button", class: "button listall" }, "List every Run");
      all.addEventListener("click", () => { st.list = true; update(ctl); });
      ctl.runsBody.replaceChildren(h("p", { class: "muted small" },
        "Choose a filter above or type a search to list the matching Runs, or "), all);
      return;
    }
    if (!runs.length) {
      ctl.runsBody.replaceChildren(h("p", { class: "muted none-match" }, "No Run matches."));
      return;
    }
    const slugs = Object.fromEntries(data.tasks.map((t) => [t.name, t.slug]));
    const doc = ctl.doc;
    const head = h("tr", null, ["Task", "Model", "Sample", "Result", "Score", "Failing Checks", "Tags", "Output"]
      .map((t) => h("th", { scope: "col" }, t)));
    const rows = runs.slice(0, ctl.limit).map((r) => h("tr", { "data-run": r.id },
      h("td", null, link(taskHref(data.slug, slugs[r.task] || r.task), r.task)),
      h("td", null, r.model, h("div", { class: "muted small" }, r.config)),
      h("td", { class: "num" }, r.sample === null ? "–" : String(r.sample)),
      h("td", null, link(runHref(data.slug, r.id), badge(r.status)),
        r.tampering ? h("span", { class: "badge b-tampering", title: `${plural(r.tampering, "tampering mark")} in its Grade` }, "tampering") : null),
      h("td", { class: "num" }, r.score === null ? "–" : num(r.score)),
      h("td", { class: "small" }, failingChecks(doc, r)),
      h("td", null, chips(r.tags)),
      h("td", { class: "excerpt" }, excerpt(r, st.q, ctl.index))));
    const more = runs.length > ctl.limit ? h("button", { type: "button", class: "button more" },
      `Show ${Math.min(PAGE, runs.length - ctl.limit)} more (${runs.length - ctl.limit} not shown)`) : null;
    if (more) more.addEventListener("click", () => { ctl.limit += PAGE; draw(ctl); });
    ctl.runsBody.replaceChildren(h("div", { class: "scroll" }, h("table", { class: "board runs" },
      h("thead", null, head), h("tbody", null, rows))), ...(more ? [more] : []));
  }

  function failingChecks(doc, r) {
    const out = [];
    for (let i = 0; i < doc.checks.length; i++) {
      const v = r.checks[i];
      if (v === "f" || v === "e") out.push(v === "e" ? `${doc.checks[i]} (error)` : doc.checks[i]);
    }
    return out.join(", ");
  }

  /* The start of the output, the search's first match marked (with text nodes only): the
     whole search, else its first word found in the start shown; a Run the index matched
     further in its output says so. */
  function excerpt(r, q, index) {
    const text = r.excerpt.length > 160 ? null : r.excerpt;
    const lower = r.excerpt.toLowerCase();
    let words = q.toLowerCase();
    let at = words ? lower.indexOf(words) : -1;
    if (at < 0 && words && index) {
      words = wordsOf(q, index.word_chars).find((w) => lower.includes(w)) || "";
      at = words ? lower.indexOf(words) : -1;
    }
    if (at < 0) {
      const further = q && index && !r.task.toLowerCase().includes(q.toLowerCase());
      return h("span", { class: "small" }, text === null ? r.excerpt.slice(0, 160) + "…" : text,
        further ? h("span", { class: "muted further" }, " (found further in the output)") : null);
    }
    const from = Math.max(0, at - 60);
    return h("span", { class: "small" }, from ? "…" : "", r.excerpt.slice(from, at),
      h("mark", null, r.excerpt.slice(at, at + words.length)),
      r.excerpt.slice(at + words.length, at + words.length + 80),
      at + words.length + 80 < r.excerpt.length ? "…" : "");
  }

  // --- a Task page opened from a filtered Eval page -----------------------------------

  /* Hide the Runs of the Task page that do not match the filters in its address; a note
     says so, with a link to all of them. */
  function taskPage(data, task, route, columns) {
    const st = readState(route.query);
    st.color = "";
    st.list = false;
    if (!filtering(st)) return null;
    const note = h("p", { class: "note small explore-task" }, "Loading the filters…");
    const holder = {};
    const index = st.q ? loadIndex(data.slug, holder) : Promise.resolve();
    Promise.all([ui.load(`${data.slug}/explore`), index]).then(([doc]) => {
      if (!doc.checks.includes(st.check)) st.check = "";
      const keep = new Set(doc.runs.filter(matcher(st, doc, null, holder.index)).filter((r) => r.task === task.task).map((r) => r.id));
      const runs = [...columns.querySelectorAll("[data-run]")];
      for (const el of runs) el.hidden = !keep.has(el.getAttribute("data-run"));
      const base = location.hash.split("?")[0];
      note.replaceChildren(`Showing the ${plural(runs.filter((el) => !el.hidden).length, "Run")} of this task ` +
        `that match the filters (${describe(st)}); `, link(base, "show all its Runs"), ".");
    }).catch(() => { note.textContent = "The filters cannot be applied: this site has no explore data."; });
    return note;
  }

  function describe(st) {
    const parts = FILTERS.filter(([key]) => st.f.has(key)).map(([, label]) => label.toLowerCase());
    if (st.check) parts.push(`Check “${st.check}” failing`);
    if (st.q) parts.push(`“${st.q}”`);
    return parts.join(", ");
  }

  return { evalPage, taskPage };
};
