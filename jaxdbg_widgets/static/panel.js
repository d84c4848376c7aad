// jaxdbg debugger panel: the browser side of jaxdbg_widgets.panel.widget.PanelWidget.
//
// It draws the state Python syncs (frames, selected, source, locals_page, log, status,
// history, done) and sends commands back with model.send. Text from the kernel is put
// in with textContent only, never as markup. The input is cleared the moment Enter is
// pressed and the line travels in the message, so commands typed while one runs queue
// in order on the kernel side; none is joined with the next, lost or wiped.

const SHORTCUTS = {
  continue: { label: "F8", test: (e) => e.key === "F8" && !e.shiftKey && !e.altKey && !e.ctrlKey && !e.metaKey },
  up: { label: "Alt+↑", test: (e) => e.altKey && !e.shiftKey && !e.ctrlKey && e.key === "ArrowUp" },
  down: { label: "Alt+↓", test: (e) => e.altKey && !e.shiftKey && !e.ctrlKey && e.key === "ArrowDown" },
  quit: { label: "Alt+Shift+Q", test: (e) => e.altKey && e.shiftKey && !e.ctrlKey && e.code === "KeyQ" },
};
const LOCALS_PAGE = 200;

function h(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function button(label, title, cls) {
  const b = h("button", "jaxdbg-button" + (cls ? " " + cls : ""), label);
  b.type = "button";
  b.title = title;
  return b;
}

function commonPrefix(words) {
  if (!words.length) return "";
  let p = words[0];
  for (const w of words) while (!w.startsWith(p)) p = p.slice(0, -1);
  return p;
}

// A completion either replaces the whole text or the name being typed at its end.
function applyCompletion(text, match) {
  if (match.startsWith(text)) return match;
  const tail = match.includes(".") ? /[A-Za-z_][\w.]*$/ : /[A-Za-z_]\w*$/;
  const m = text.match(tail);
  return (m ? text.slice(0, m.index) : text) + match;
}

// Where the word being completed starts: after the last character that cannot be part
// of a name (a dot, a space, a bracket or quote). The list shows only that word.
function wordStart(text) {
  return text.length - text.match(/\w*$/)[0].length;
}

function render({ model, el }) {
  // Message names and shared phrases come from Python (jaxdbg_widgets.panel.protocol,
  // jaxdbg.views.phrases) through the widget's state, so they are written once.
  const TO_KERNEL = model.get("protocol").toKernel;
  const TO_BROWSER = model.get("protocol").toBrowser;
  const PHRASES = model.get("phrases");
  const moreCharacters = (n) => PHRASES.moreCharacters.replace("{count}", n.toLocaleString());
  const view = Math.random().toString(36).slice(2, 10);
  let seq = 0;
  const pending = new Map(); // command id -> line, sent and not yet handled
  const history = [...(model.get("history") || [])];
  let historyPos = history.length;
  let draft = "";
  let completionId = 0;
  let loadedLocals = 0;
  let requestedLocals = -1;

  const root = h("div", "jaxdbg-panel");
  root.tabIndex = -1;
  el.appendChild(root);

  // -- header and toolbar --------------------------------------------------------
  const header = h("div", "jaxdbg-header");
  const banner = h("div", "jaxdbg-banner");
  const reason = h("div", "jaxdbg-reason");
  header.append(banner, reason);

  const toolbar = h("div", "jaxdbg-toolbar");
  // Each button's tooltip is its command's help in the command table (tooltips: line -> help).
  const tips = model.get("tooltips") || {};
  const tip = (line) => tips[line] || line;
  const staysNote = " (stays paused here: Continue goes on)";
  const bContinue = button("Continue", `${tip("continue")} (${SHORTCUTS.continue.label})`, "jaxdbg-primary");
  const bUp = button("Up", `${tip("up")} (${SHORTCUTS.up.label})`);
  const bDown = button("Down", `${tip("down")} (${SHORTCUTS.down.label})`);
  const bSkip = button("Skip batch", tip("skip"));
  const bAll = button("Continue all", tip("continue all"));
  const bDisable = button("Disable", tip("disable") + staysNote);
  const ignoreCount = h("input", "jaxdbg-ignore-count");
  ignoreCount.type = "number";
  ignoreCount.min = "1";
  ignoreCount.value = "10";
  ignoreCount.title = "how many hits to ignore";
  const bIgnore = button("Ignore", tip("ignore") + staysNote);
  const bQuit = button("Quit", `${tip("quit")} (${SHORTCUTS.quit.label})`, "jaxdbg-danger");
  const busy = h("span", "jaxdbg-busy");
  busy.setAttribute("role", "status");
  // Disable and Ignore change later hits and do not resume (as in pdb): grouped apart
  // from the buttons that go on, with words saying so.
  const manyStops = h("span", "jaxdbg-many-stops");
  const staysPaused = h("span", "jaxdbg-stays-paused");
  staysPaused.append(bDisable, ignoreCount, bIgnore, h("span", "jaxdbg-stays-note", "(stays paused)"));
  manyStops.append(bAll, staysPaused);
  toolbar.append(bContinue, bUp, bDown, bSkip, manyStops, bQuit, busy);

  // -- frames and source ------------------------------------------------------
  const body = h("div", "jaxdbg-body");
  const framesBox = h("div", "jaxdbg-frames");
  framesBox.setAttribute("role", "listbox");
  framesBox.setAttribute("aria-label", "frames, innermost first");
  const sourceBox = h("div", "jaxdbg-source-box");
  const sourceHeading = h("div", "jaxdbg-source-heading");
  const source = h("div", "jaxdbg-source");
  sourceBox.append(sourceHeading, source);
  body.append(framesBox, sourceBox);

  // -- locals -----------------------------------------------------------------
  const localsWrap = h("div", "jaxdbg-locals");
  const table = h("table", "jaxdbg-locals-table");
  const thead = h("thead");
  const headRow = h("tr");
  for (const c of ["name", "type", "array", "sharding", "summary"]) headRow.append(h("th", "jaxdbg-col-" + c, c));
  thead.append(headRow);
  const tbody = h("tbody");
  table.append(thead, tbody);
  const localsNote = h("div", "jaxdbg-locals-note");
  localsWrap.append(table, localsNote);

  // -- console ------------------------------------------------------------------
  const logBox = h("div", "jaxdbg-log");
  logBox.setAttribute("role", "log");
  const inputRow = h("div", "jaxdbg-input-row");
  const prompt = h("span", "jaxdbg-prompt", "(jaxdbg)");
  const input = h("input", "jaxdbg-input");
  input.type = "text";
  input.spellcheck = false;
  input.autocomplete = "off";
  input.placeholder = "expression, statement or command; Enter runs it, Tab completes, ↑/↓ history";
  const ppLabel = h("label", "jaxdbg-pp");
  const pp = h("input");
  pp.type = "checkbox";
  ppLabel.title = "pretty-print results (pp)";
  ppLabel.append(pp, document.createTextNode(" pp"));
  const completions = h("div", "jaxdbg-completions");
  completions.setAttribute("role", "listbox");
  inputRow.append(prompt, input, ppLabel, completions);
  const ended = h("div", "jaxdbg-ended");
  const gone = h("div", "jaxdbg-gone");
  gone.setAttribute("role", "alert");
  gone.hidden = true;

  root.append(header, gone, toolbar, body, localsWrap, logBox, inputRow, ended);

  // -- sending ------------------------------------------------------------------
  function finished() {
    return !!(model.get("status") || {}).finished;
  }

  function run(line, { typed = false, pretty = false } = {}) {
    if (finished() || kernelGone) return;
    const id = `${view}:${++seq}`;
    try {
      model.send({ type: TO_KERNEL.RUN, id, line, typed, pretty });
    } catch (e) {
      onKernelGone(); // the comm is closed: say so rather than drop the line
      return;
    }
    pending.set(id, { line, typed, pretty });
    drawLog();
  }

  // -- kernel gone ----------------------------------------------------------------
  // After a kernel restart or shutdown this panel's stop no longer exists: the widget
  // manager marks its models' comms dead ("comm_live_update", ipywidgets 8), and the
  // kernel connection reports its status. The panel says so and disables its controls.
  let kernelGone = false;
  const DEAD = new Set(["restarting", "autorestarting", "dead", "terminating"]);
  const kernel = model.widget_manager && model.widget_manager.kernel;

  function onKernelGone() {
    if (kernelGone || finished()) return;
    kernelGone = true;
    pending.clear();
    gone.textContent = "The kernel of this stop has restarted or shut down: this panel can no longer " +
      "reach it, and what it shows is what the stop was. Run the cell again to debug it.";
    gone.hidden = false;
    root.classList.add("jaxdbg-kernel-gone");
    for (const b of root.querySelectorAll("button, input")) b.disabled = true;
    hideCompletions();
    drawLog();
  }

  function onKernelStatus(_sender, status) {
    if (DEAD.has(status)) onKernelGone();
  }

  // comm_live changes also when a reloaded page reconnects a restored model: only a
  // kernel that is restarting, dead or disposed means this stop is gone.
  const onCommLive = () => {
    if (kernel && (kernel.isDisposed || DEAD.has(kernel.status))) onKernelGone();
  };
  model.on("comm_live_update", onCommLive);
  if (kernel && kernel.statusChanged) kernel.statusChanged.connect(onKernelStatus);
  if (kernel && kernel.disposed) kernel.disposed.connect(onKernelGone);

  function onDone() {
    const done = model.get("done") || "";
    const [v, n] = done.split(":");
    if (v !== view) return;
    for (const id of [...pending.keys()]) if (Number(id.split(":")[1]) <= Number(n)) pending.delete(id);
    drawLog();
  }

  bContinue.onclick = () => run("continue");
  bUp.onclick = () => run("up");
  bDown.onclick = () => run("down");
  bSkip.onclick = () => run("skip");
  bQuit.onclick = () => run("quit");
  bAll.onclick = () => run("continue all");
  bDisable.onclick = () => run("disable");
  bIgnore.onclick = () => {
    const n = Math.max(1, parseInt(ignoreCount.value, 10) || 1);
    run(`ignore ${n}`);
  };

  // -- keys -------------------------------------------------------------------------
  root.addEventListener("keydown", (e) => {
    for (const [name, s] of Object.entries(SHORTCUTS)) {
      if (s.test(e)) {
        e.preventDefault();
        e.stopPropagation();
        ({ continue: bContinue, up: bUp, down: bDown, quit: bQuit })[name].click();
        return;
      }
    }
  });

  input.addEventListener("keydown", (e) => {
    if (Object.values(SHORTCUTS).some((s) => s.test(e))) return; // the panel handles them
    if (reachesNotebook(e)) return;
    // Keys typed here belong to the debugger, not to the notebook around it
    // (Shift+Enter must not queue a cell run behind the paused one).
    e.stopPropagation();
    if (completionKey(e)) return;
    if (e.key === "Enter") {
      e.preventDefault();
      const line = input.value;
      input.value = "";
      hideCompletions();
      if (!line.trim()) return;
      if (history[history.length - 1] !== line) history.push(line);
      historyPos = history.length;
      draft = "";
      run(line, { typed: true, pretty: pp.checked });
    } else if (e.key === "ArrowUp" && !e.altKey) {
      e.preventDefault();
      if (historyPos === history.length) draft = input.value;
      if (historyPos > 0) input.value = history[--historyPos];
    } else if (e.key === "ArrowDown" && !e.altKey) {
      e.preventDefault();
      if (historyPos < history.length) {
        historyPos += 1;
        input.value = historyPos === history.length ? draft : history[historyPos];
      }
    } else if (e.key === "Tab" && !e.shiftKey) {
      e.preventDefault();
      requestCompletions();
    }
  });
  // Notebook shortcuts that run no code go on to the notebook: save (Ctrl/Cmd+S) and
  // Esc (unless it closes the completion list).
  function reachesNotebook(e) {
    const save = (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === "s";
    return save || (e.key === "Escape" && !choices);
  }

  input.addEventListener("keyup", (e) => e.stopPropagation());
  input.addEventListener("keypress", (e) => e.stopPropagation());
  input.addEventListener("input", narrowCompletions);

  // -- completion -------------------------------------------------------------------
  // Tab asks the kernel; one match is put in at once, several open a list of the
  // completed words. While the list is open it narrows as you type, ↓/↑ move in it,
  // Enter or Tab puts the highlighted one in, Esc closes it.
  let choices = null; // {head, rest, items: [full line], shown: [full line], active}

  function requestCompletions() {
    completionId += 1;
    model.send({ type: TO_KERNEL.COMPLETE, id: completionId, text: input.value.slice(0, caret()) });
  }

  function caret() {
    return input.selectionStart ?? input.value.length;
  }

  // The keys of an open list; true when the key was the list's.
  function completionKey(e) {
    if (!choices) return false;
    const n = choices.shown.length;
    if (e.key === "ArrowDown" && !e.altKey) choices.active = (choices.active + 1) % n;
    else if (e.key === "ArrowUp" && !e.altKey) choices.active = (choices.active - 1 + n) % n;
    else if ((e.key === "Enter" || (e.key === "Tab" && !e.shiftKey)) && !e.altKey) pick(choices.shown[choices.active]);
    else if (e.key === "Escape") hideCompletions();
    else return false;
    e.preventDefault();
    drawCompletions();
    return true;
  }

  function pick(full) {
    const rest = choices ? choices.rest : "";
    hideCompletions();
    setInput(full + rest, full.length);
  }

  function hideCompletions() {
    choices = null;
    completions.replaceChildren();
    completions.classList.remove("jaxdbg-open");
  }

  function setInput(text, at = text.length) {
    input.value = text;
    input.setSelectionRange(at, at);
    input.focus();
  }

  function onCompletions(msg) {
    if (msg.id !== completionId) return;
    const text = msg.text;
    if (input.value.slice(0, caret()) !== text) return; // typed on meanwhile
    const rest = input.value.slice(caret());
    const matches = [...new Set((msg.matches || []).map((m) => applyCompletion(text, m)))];
    hideCompletions();
    if (!matches.length) return;
    const prefix = commonPrefix(matches);
    if (prefix.length > text.length) {
      input.value = prefix + rest;
      input.setSelectionRange(prefix.length, prefix.length);
    }
    if (matches.length === 1) return;
    choices = { head: prefix.slice(0, wordStart(prefix)), rest, items: matches, shown: matches, active: 0 };
    drawCompletions();
  }

  // Typing on (or deleting) while the list is open keeps the items that still fit.
  function narrowCompletions() {
    if (!choices) return;
    const typed = input.value.slice(0, caret());
    if (!typed.startsWith(choices.head) || /\W/.test(typed.slice(choices.head.length))) {
      hideCompletions();
      return;
    }
    choices.rest = input.value.slice(caret());
    choices.shown = choices.items.filter((m) => m.startsWith(typed) && m !== typed);
    choices.active = 0;
    if (!choices.shown.length) hideCompletions();
    else drawCompletions();
  }

  function drawCompletions() {
    completions.replaceChildren();
    if (!choices) return;
    choices.shown.slice(0, 100).forEach((full, i) => {
      const on = i === choices.active;
      const item = h("div", "jaxdbg-completion" + (on ? " jaxdbg-active" : ""), full.slice(choices.head.length));
      item.setAttribute("role", "option");
      item.setAttribute("aria-selected", String(on));
      item.title = full;
      item.onmousedown = (e) => {
        e.preventDefault();
        pick(full);
      };
      completions.append(item);
      if (on) requestAnimationFrame(() => item.scrollIntoView({ block: "nearest" }));
    });
    completions.classList.add("jaxdbg-open");
  }

  // -- drawing ------------------------------------------------------------------------
  function drawStatus() {
    const s = model.get("status") || {};
    banner.textContent = s.banner || "";
    reason.textContent = s.reason || "";
    reason.hidden = !s.reason;
    bSkip.hidden = !s.batched;
    manyStops.hidden = !s.many_stops;
    bUp.disabled = !!s.oldest || !!s.finished || kernelGone;
    bDown.disabled = !!s.newest || !!s.finished || kernelGone;
    for (const b of [bContinue, bSkip, bQuit, bAll, bDisable, bIgnore]) b.disabled = !!s.finished || kernelGone;
    input.disabled = !!s.finished || kernelGone;
    root.classList.toggle("jaxdbg-finished", !!s.finished);
    ended.textContent = s.finished ? s.ended || "The stop has ended." : "";
  }

  // The frames and source boxes are as tall as the longer of the two needs (up to the
  // source window's lines), and never shrink while this view shows: navigating does not
  // move what is below. Lines they do not need go to the locals table.
  let bodyLines = 0;

  function sizeBody() {
    const src = model.get("source") || {};
    const most = 2 * (src.context || 8) + 1;
    const need = Math.max((model.get("frames") || []).length, (src.lines || []).length, 4);
    bodyLines = Math.min(most, Math.max(bodyLines, need));
    root.style.setProperty("--jaxdbg-body-lines", String(bodyLines));
    root.style.setProperty("--jaxdbg-spare-lines", String(most - bodyLines));
  }

  function drawFrames() {
    sizeBody();
    const selected = model.get("selected");
    framesBox.replaceChildren();
    (model.get("frames") || []).forEach((f, i) => {
      const row = h("div", "jaxdbg-frame" + (i === selected ? " jaxdbg-selected" : ""));
      row.setAttribute("role", "option");
      row.setAttribute("aria-selected", String(i === selected));
      row.title = f.path;
      row.dataset.index = String(i);
      row.append(h("span", "jaxdbg-frame-index", i), h("span", "jaxdbg-frame-function", f.function),
                 h("span", "jaxdbg-frame-where", f.where));
      row.onclick = () => run(`frame ${i}`);
      framesBox.append(row);
    });
  }

  function drawSelected() {
    const selected = model.get("selected");
    for (const row of framesBox.children) {
      const on = Number(row.dataset.index) === selected;
      row.classList.toggle("jaxdbg-selected", on);
      row.setAttribute("aria-selected", String(on));
      if (on) row.scrollIntoView({ block: "nearest" });
    }
  }

  function drawSource() {
    const src = model.get("source") || {};
    sourceHeading.textContent = src.heading || "";
    sourceHeading.title = src.path || "";
    sizeBody();
    source.replaceChildren();
    const lines = src.lines || [];
    if (!lines.length) {
      source.append(h("div", "jaxdbg-no-source", PHRASES.noSource));
      return;
    }
    const width = String(src.first + lines.length - 1).length;
    let current = null;
    lines.forEach((runs, k) => {
      const n = src.first + k;
      const isCurrent = n === src.current;
      const line = h("div", "jaxdbg-line" + (isCurrent ? " jaxdbg-current" : ""));
      line.dataset.lineno = String(n);
      line.append(h("span", "jaxdbg-lineno", String(n).padStart(width)),
                  h("span", "jaxdbg-marker", isCurrent ? "→" : " "));
      const code = h("span", "jaxdbg-code");
      for (const [cls, text] of runs) code.append(h("span", cls ? "tok-" + cls : "", text));
      line.append(code);
      source.append(line);
      if (isCurrent) current = line;
    });
    if (current) source.scrollTop = current.offsetTop - source.clientHeight / 2 + current.offsetHeight / 2;
  }

  function pathKey(path) {
    return JSON.stringify(path);
  }

  function localRow(r, path, depth) {
    const tr = h("tr", "jaxdbg-local" + (r.nonfinite ? " jaxdbg-nonfinite" : ""));
    tr.dataset.path = pathKey(path);
    const name = h("td", "jaxdbg-col-name");
    name.style.paddingLeft = `${4 + depth * 14}px`;
    if (r.expandable) {
      const t = h("button", "jaxdbg-toggle", "▸");
      t.type = "button";
      t.title = "expand";
      t.setAttribute("aria-expanded", "false");
      t.onclick = (e) => {
        e.stopPropagation();
        toggle(tr, t, path, depth);
      };
      name.append(t);
    } else {
      name.append(h("span", "jaxdbg-toggle-space"));
    }
    const label = h("span", "jaxdbg-name", r.name);
    if (depth === 0) {
      label.classList.add("jaxdbg-clickable");
      label.title = `show ${r.name} in full (pp ${r.name})`;
      label.onclick = () => run(`pp ${r.name}`);
    }
    name.append(label);
    tr.append(name, h("td", "jaxdbg-col-type", r.type), h("td", "jaxdbg-col-array", r.array),
              h("td", "jaxdbg-col-sharding", r.sharding));
    const summary = h("td", "jaxdbg-col-summary", r.pending ? "…" : r.summary);
    if (r.finite_only) summary.title = "min / max / mean are over the finite values only";
    if (r.pending) {
      // A big array: the kernel takes its statistics once the row is shown.
      summary.classList.add("jaxdbg-stats-pending");
      summary.title = "computing statistics…";
      model.send({ type: TO_KERNEL.STATS, frame: (model.get("locals_page") || {}).frame, path });
    }
    tr.append(summary);
    return tr;
  }

  function onStats(msg) {
    const page = model.get("locals_page") || {};
    if (msg.frame !== page.frame) return;
    const old = tbody.querySelector(`tr[data-path='${CSS.escape(pathKey(msg.path))}']`);
    if (old) old.replaceWith(localRow(msg.row, msg.path, msg.path.length - 1));
  }

  function toggle(tr, t, path, depth) {
    const open = t.getAttribute("aria-expanded") === "true";
    if (open) {
      const prefix = pathKey(path).slice(0, -1) + ",";
      for (const row of [...tbody.querySelectorAll("tr")]) if (row.dataset.path.startsWith(prefix)) row.remove();
      t.setAttribute("aria-expanded", "false");
      t.textContent = "▸";
      return;
    }
    t.setAttribute("aria-expanded", "true");
    t.textContent = "▾";
    tr.dataset.depth = String(depth);
    model.send({ type: TO_KERNEL.EXPAND, frame: model.get("selected"), path });
  }

  function onChildren(msg) {
    const page = model.get("locals_page") || {};
    if (msg.frame !== page.frame) return;
    const parent = tbody.querySelector(`tr[data-path='${CSS.escape(pathKey(msg.path))}']`);
    if (!parent) return;
    const depth = Number(parent.dataset.depth || 0) + 1;
    let after = parent;
    msg.rows.forEach((r, i) => {
      const row = localRow(r, [...msg.path, i], depth);
      after.after(row);
      after = row;
    });
    if (msg.total > msg.rows.length) {
      const more = h("tr", "jaxdbg-local-more");
      more.dataset.path = pathKey([...msg.path, "more"]);
      const td = h("td", "", `… ${msg.total - msg.rows.length} more`);
      td.colSpan = 5;
      more.append(td);
      after.after(more);
    }
  }

  const sentinel = h("tr", "jaxdbg-local-loading");
  const sentinelCell = h("td");
  sentinelCell.colSpan = 5;
  sentinel.append(sentinelCell);
  const observer = typeof IntersectionObserver === "function"
    ? new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) requestMoreLocals(); },
                               { root: localsWrap, rootMargin: "40px" })
    : null;

  function requestMoreLocals() {
    const page = model.get("locals_page") || {};
    if (loadedLocals >= (page.total || 0) || requestedLocals === loadedLocals) return;
    requestedLocals = loadedLocals;
    model.send({ type: TO_KERNEL.LOCALS, frame: page.frame, start: loadedLocals, count: LOCALS_PAGE });
  }

  function appendLocals(rows, start) {
    rows.forEach((r, i) => tbody.insertBefore(localRow(r, [r.name], 0), sentinel));
    loadedLocals = start + rows.length;
    updateLocalsNote();
  }

  function updateLocalsNote() {
    const total = (model.get("locals_page") || {}).total || 0;
    const left = total - loadedLocals;
    sentinel.hidden = left <= 0;
    sentinelCell.textContent = left > 0 ? `… ${left} more (scroll to load)` : "";
    localsNote.textContent = total === 0 ? PHRASES.noLocals : "";
  }

  function drawLocals() {
    const page = model.get("locals_page") || {};
    // Room for the longest frame's table (up to the box's maximum height), so that
    // selecting another frame never moves what is below.
    localsWrap.style.setProperty("--jaxdbg-locals-rows", String(Math.max(1, page.most || 0)));
    tbody.replaceChildren(sentinel);
    loadedLocals = 0;
    requestedLocals = -1;
    localsWrap.scrollTop = 0;
    appendLocals(page.rows || [], 0);
    if (observer) {
      observer.disconnect();
      observer.observe(sentinel);
    }
  }

  function onLocals(msg) {
    const page = model.get("locals_page") || {};
    if (msg.frame !== page.frame || msg.start !== loadedLocals) return;
    appendLocals(msg.rows, msg.start);
    requestedLocals = -1;
  }

  function echo(cmd, pretty) {
    return PHRASES.prompt + (pretty ? "pp " : "") + cmd;
  }

  function drawLog() {
    const follow = logBox.scrollHeight - logBox.scrollTop - logBox.clientHeight < 40;
    logBox.replaceChildren();
    for (const e of model.get("log") || []) {
      const entry = h("div", "jaxdbg-entry" + (e.error ? " jaxdbg-error" : ""));
      if (e.command) {
        const c = h("div", "jaxdbg-in", echo(e.command, e.pretty));
        if (e.command_cut) c.append(h("span", "jaxdbg-cut", ` … [${moreCharacters(e.command_cut)}]`));
        entry.append(c);
      }
      if (e.html) {
        // A sharding layout, rendered by jaxdbg (user text escaped there): drawn, not printed.
        const layout = h("div", "jaxdbg-out-html");
        layout.innerHTML = e.html;
        entry.append(layout);
      } else if (e.text) entry.append(h("pre", "jaxdbg-out", e.text));
      if (e.cut) {
        const more = button(`Show more (${moreCharacters(e.cut)})`, "show this result in full", "jaxdbg-more");
        more.onclick = () => model.send({ type: TO_KERNEL.MORE, entry: e.n });
        entry.append(more);
      }
      logBox.append(entry);
    }
    for (const p of pending.values()) {
      const line = p.line.length > 300 ? p.line.slice(0, 300) + " …" : p.line;
      logBox.append(h("div", "jaxdbg-entry jaxdbg-pending", echo(line, p.pretty)));
    }
    busy.textContent = pending.size ? "running…" : "";
    root.classList.toggle("jaxdbg-busy-now", pending.size > 0);
    logBox.hidden = !logBox.children.length;
    if (follow || pending.size) logBox.scrollTop = logBox.scrollHeight;
  }

  model.on("change:status", drawStatus);
  model.on("change:frames", drawFrames);
  model.on("change:selected", drawSelected);
  model.on("change:source", drawSource);
  model.on("change:locals_page", drawLocals);
  model.on("change:log", drawLog);
  model.on("change:done", onDone);
  const onMessage = (msg) => {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === TO_BROWSER.LOCALS) onLocals(msg);
    if (msg.type === TO_BROWSER.STATS) onStats(msg);
    else if (msg.type === TO_BROWSER.CHILDREN) onChildren(msg);
    else if (msg.type === TO_BROWSER.COMPLETIONS) onCompletions(msg);
  };
  model.on("msg:custom", onMessage);

  drawStatus();
  drawFrames();
  drawSource();
  drawLocals();
  drawLog();

  // Focus the console, and bring a panel whose top is out of view (Run All: the notebook
  // follows the cells queued after it) into view from its top: banner and source first.
  requestAnimationFrame(() => {
    if (finished()) return;
    input.focus({ preventScroll: true });
    showTop();
  });

  function scrollParent(node) {
    for (let e = node.parentElement; e; e = e.parentElement) {
      const y = getComputedStyle(e).overflowY;
      if ((y === "auto" || y === "scroll") && e.scrollHeight > e.clientHeight) return e;
    }
    return document.scrollingElement;
  }

  function showTop() {
    const scroller = scrollParent(root);
    const view = scroller === document.scrollingElement
      ? { top: 0, bottom: window.innerHeight } : scroller.getBoundingClientRect();
    const top = root.getBoundingClientRect().top;
    if (top >= view.top && top <= view.bottom - 80) return;
    scroller.scrollTop += top - view.top - 8;
  }

  // Clear Output sends the kernel nothing; tell it when this page shows no view of a
  // live panel any more, so the paused stop can show the panel again.
  model.jaxdbgViews = (model.jaxdbgViews || 0) + 1;

  return () => {
    model.jaxdbgViews -= 1;
    if (model.jaxdbgViews === 0 && !finished()) {
      setTimeout(() => {
        if (model.jaxdbgViews !== 0 || finished()) return; // shown again meanwhile
        try {
          model.send({ type: TO_KERNEL.VIEWS, count: 0 });
        } catch (e) {} // the model itself is gone (page or kernel closing)
      }, 300);
    }
    if (observer) observer.disconnect();
    model.off("change:status", drawStatus);
    model.off("change:frames", drawFrames);
    model.off("change:selected", drawSelected);
    model.off("change:source", drawSource);
    model.off("change:locals_page", drawLocals);
    model.off("change:log", drawLog);
    model.off("change:done", onDone);
    model.off("msg:custom", onMessage);
    model.off("comm_live_update", onCommLive);
    if (kernel && kernel.statusChanged) kernel.statusChanged.disconnect(onKernelStatus);
    if (kernel && kernel.disposed) kernel.disposed.disconnect(onKernelGone);
  };
}

export default { render };
