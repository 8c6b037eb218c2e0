/* smevals web report: a Run's steps as a timeline, and its workspace.diff (docs/web-report.md).
 *
 * The timelines come from the Run page's data (site/timeline.py): the Run's
 * transcript.jsonl (or the tool calls its runner recorded) and the judge calls of the
 * Grade that counts, each already in the one shape of store/transcript.py, every text cut
 * at a cap. Here each entry becomes a row: assistant and user turns, tool calls with their
 * arguments, results (errors marked), errors; a long text is folded after its first lines;
 * the entry's JSON is one click away. Every string goes through text nodes (the app's h()).
 */
(window.SMEVALS_PARTS = window.SMEVALS_PARTS || {}).timeline = function (ui) {
  "use strict";

  const { h, section, pre, plural, num, fileHref } = ui;
  const FOLD_CHARS = 1200;           // a text longer than this, or of more lines, is folded
  const FOLD_LINES = 16;

  /* A text, folded after its first lines when long (the whole text one click away). */
  function longText(text, cls) {
    const value = typeof text === "string" ? text : JSON.stringify(text, null, 2);
    const lines = value.split("\n");
    if (value.length <= FOLD_CHARS && lines.length <= FOLD_LINES) return pre(value, cls);
    const head = lines.slice(0, FOLD_LINES).join("\n").slice(0, FOLD_CHARS);
    return h("div", { class: "long" }, pre(head + " …", `${cls} head`),
      h("details", { class: "more" },
        h("summary", null, `Show all (${value.length.toLocaleString("en")} characters, ${plural(lines.length, "line")})`),
        pre(value, cls)));
  }

  function argsText(args) {
    return typeof args === "string" ? args : JSON.stringify(args, null, 2);
  }

  function label(e) {
    switch (e.type) {
      case "message": return String(e.role || "message");
      case "tool_call": return "tool call";
      case "tool_result": return e.is_error ? "tool error" : "tool result";
      case "error": return "error";
      default: return "event";
    }
  }

  /* The images a judge was sent, as thumbnails of the files with their hashes (a link to
     each); an image no file of the Grade or the Run has is named, not shown. */
  function imagesView(images) {
    return h("div", { class: "tl-images" }, images.map((img) => img.src
      ? h("a", { class: "tl-image", href: img.href || img.src, title: `${img.name || img.path} · sha256 ${img.sha256}` },
          h("img", { src: img.src, alt: img.name || img.path || "image sent to the judge", class: "thumb",
                     decoding: "async", loading: "lazy" }))
      : h("span", { class: "tl-image missing muted small" },
          `${img.name || "an image"} (sha256 ${String(img.sha256 || "").slice(0, 12)}…: no file of the Grade or the Run has it)`)));
  }

  function body(e) {
    switch (e.type) {
      case "message": return [e.text === undefined ? null : longText(e.text, "text"),
                              e.images && e.images.length ? imagesView(e.images) : null];
      case "tool_call": return e.arguments === undefined ? null : longText(argsText(e.arguments), "json args");
      case "tool_result": return e.output === undefined ? null : longText(e.output, "text result");
      case "error": return longText(e.message || "", "text");
      default: return longText(JSON.stringify(e.raw, null, 2), "json");
    }
  }

  function entryView(e, i) {
    const bad = e.type === "error" || (e.type === "tool_result" && e.is_error);
    const kind = e.type === "message" ? `tl-message tl-${String(e.role || "").replace(/[^a-z]/g, "")}` : `tl-${e.type}`;
    const meta = [e.turn !== undefined ? `turn ${e.turn}` : "", e.t !== undefined ? `${num(e.t, 1)} s` : ""].filter(Boolean);
    return h("li", { class: `tl ${kind}${bad ? " tl-bad" : ""}`, "data-type": e.type },
      h("div", { class: "tl-head" },
        h("span", { class: "tl-kind" }, label(e)),
        e.name !== undefined ? h("code", { class: "tl-name" }, e.name) : null,
        e.id !== undefined ? h("span", { class: "muted small" }, ` ${e.id}`) : null,
        e.exit_code !== undefined ? h("span", { class: "small" }, ` exit ${e.exit_code}`) : null,
        h("span", { class: "muted small push" }, meta.join(" · ") || `#${i + 1}`)),
      body(e),
      h("details", { class: "raw" }, h("summary", null, "raw"), pre(JSON.stringify(e, null, 2), "json")));
  }

  function counts(entries) {
    const n = (f) => entries.filter(f).length;
    const calls = n((e) => e.type === "tool_call");
    const errors = n((e) => e.type === "error" || (e.type === "tool_result" && e.is_error));
    const turns = n((e) => e.type === "message" && e.role === "assistant");
    return `${entries.length} ${entries.length === 1 ? "entry" : "entries"}` +
      ` · ${plural(turns, "assistant turn")} · ${plural(calls, "tool call")} · ${plural(errors, "error")}`;
  }

  function timeline(t) {
    return h("div", { class: "timeline-wrap", "data-source": t.source },
      h("p", { class: "small muted" }, `From ${t.source}: ${counts(t.entries)}`,
        t.file ? [" · ", h("a", { href: t.file.href, download: t.file.download }, "raw file")] : null),
      t.cut ? h("p", { class: "note small cut" }, `Cut: ${t.cut}.`) : null,
      t.entries.length ? h("ol", { class: "timeline" }, t.entries.map(entryView))
                       : h("p", { class: "muted" }, "No entries."));
  }

  /* A unified diff, one span per line: file headers, hunk headers, added, removed and
     context lines. Inside a hunk the counts of its header say where it ends, so a removed
     line that starts with "--" is not taken for a file header. */
  function diffLines(text) {
    const lines = text.split("\n");
    if (lines.length && lines[lines.length - 1] === "") lines.pop();
    let old = 0, neu = 0;
    return lines.map((line) => {
      if (old > 0 || neu > 0) {
        const c = line[0];
        if (c === "+") { neu--; return ["d-add", line]; }
        if (c === "-") { old--; return ["d-del", line]; }
        if (c === "\\") return ["d-meta", line];
        old--; neu--;
        return ["d-ctx", line];
      }
      const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
      if (hunk) {
        old = hunk[1] === undefined ? 1 : Number(hunk[1]);
        neu = hunk[2] === undefined ? 1 : Number(hunk[2]);
        return ["d-hunk", line];
      }
      if (line.startsWith("\\")) return ["d-meta", line];
      return [/^(diff |index |--- |\+\+\+ |new file|deleted file|similarity|rename |old mode|new mode|Binary files|Only in )/.test(line) ? "d-file" : "d-ctx", line];
    });
  }

  function diffView(d, file) {
    const lines = diffLines(d.text);
    const n = (cls) => lines.filter(([c]) => c === cls).length;
    /* every file the diff lists has its `diff --git` header (a binary file, a link or a
       file too large to diff have no `+++` line); a diff without them counts its `+++` */
    const headers = lines.filter(([c, l]) => c === "d-file" && l.startsWith("diff ")).length;
    const files = headers || lines.filter(([c, l]) => c === "d-file" && l.startsWith("+++ ")).length;
    return h("div", null,
      h("p", { class: "small muted" }, `${plural(files, "file")} changed · +${n("d-add")} −${n("d-del")} lines`,
        file ? [" · ", h("a", { href: file.href, download: file.download }, "raw file")] : null),
      h("pre", { class: "diff" }, lines.map(([cls, line]) => h("span", { class: `dl ${cls}` }, line + "\n"))),
      d.truncated ? h("p", { class: "note small cut" }, "Cut here; the whole diff is in the raw file.") : null);
  }

  /* The Run page's sections: one per timeline, then the workspace diff. */
  function runSections(run) {
    const out = (run.timelines || []).map((t) => section(t.title, timeline(t)));
    if (run.workspace_diff) out.push(section("Workspace diff", diffView(run.workspace_diff, fileHref(run.files, "workspace.diff"))));
    return out;
  }

  return { runSections };
};
