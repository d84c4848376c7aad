// jaxdbg debugger panel: the browser side of jaxdbg_widgets.panel.widget.PanelWidget.
//
// It draws the state Python syncs (frames, selected, source, locals_page, log, status,
// history, done) and sends commands back with model.send. Text from the kernel is put
// in with textContent only, never as markup. The input is cleared the moment Enter is
// pressed and the line travels in the message, so commands typed while one runs queue
// in order on the kernel side; none is joined with the next, lost or wiped.
//
// anywidget loads this file as one module (PanelWidget._esm is its text), so the areas
// are functions here rather than files: commandQueue, toolbarArea, framesArea,
// sourceArea, localsArea, arrayViewArea (the large view of an array), watchesArea,
// breakpointsArea, consoleLog, consoleInput (with inputHistory and completer),
// panelKeys (which keys stay in the panel) and watchKernel. Each builds its nodes, takes what it needs (the model,
// `run` to send a command) and returns its nodes and its draw / message handlers;
// render() puts them together and connects them to the model.

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

// Message names and shared phrases come from Python (jaxdbg_widgets.panel.protocol,
// jaxdbg.runtime.phrases) through the widget's state, so they are written once.
function shared(model) {
  const protocol = model.get("protocol");
  const PHRASES = model.get("phrases");
  return {
    TO_KERNEL: protocol.toKernel,
    TO_BROWSER: protocol.toBrowser,
    PHRASES,
    moreCharacters: (n) => PHRASES.moreCharacters.replace("{count}", n.toLocaleString()),
  };
}

// -- commands ---------------------------------------------------------------------
// Each line sent carries an id "<view>:<n>"; it stays pending (drawn greyed in the log)
// until the kernel's `done` trait names it or a later one of this view.
function commandQueue(model) {
  const { TO_KERNEL } = shared(model);
  const view = Math.random().toString(36).slice(2, 10);
  let seq = 0;
  const pending = new Map(); // command id -> line, sent and not yet handled

  // False when the comm is closed and the line could not be sent.
  function send(line, typed, pretty) {
    const id = `${view}:${++seq}`;
    try {
      model.send({ type: TO_KERNEL.RUN, id, line, typed, pretty });
    } catch (e) {
      return false;
    }
    pending.set(id, { line, typed, pretty });
    return true;
  }

  // True when `done` is this view's, so the pending lines it covers are dropped.
  function onDone() {
    const done = model.get("done") || "";
    const [v, n] = done.split(":");
    if (v !== view) return false;
    for (const id of [...pending.keys()]) if (Number(id.split(":")[1]) <= Number(n)) pending.delete(id);
    return true;
  }

  return { pending, send, onDone };
}

// -- header and toolbar -----------------------------------------------------------
function toolbarArea(model, run) {
  const header = h("div", "jaxdbg-header");
  const banner = h("div", "jaxdbg-banner");
  const reason = h("div", "jaxdbg-reason");
  const note = h("div", "jaxdbg-note"); // "reopened from FILE": said, not as an error
  header.append(banner, note, reason);

  const toolbar = h("div", "jaxdbg-toolbar");
  // Each button's tooltip is its command's help in the command table (tooltips: line -> help).
  const tips = model.get("tooltips") || {};
  const tip = (line) => tips[line] || line;
  const MANY_STOPS = ["continue all", "disable", "ignore"];
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
  ignoreCount.setAttribute("aria-label", "how many hits to ignore");
  const bIgnore = button("Ignore", tip("ignore") + staysNote);
  const bQuit = button("Quit", `${tip("quit")} (${SHORTCUTS.quit.label})`, "jaxdbg-danger");
  // Replay runs the selected frame's function again; while it runs, the stepping buttons
  // show (Continue goes on in the replay, Quit leaves it).
  const bReplay = button("Replay", tip("replay"), "jaxdbg-replay");
  const bStep = button("Step", tip("step"), "jaxdbg-step");
  const bNext = button("Next", tip("next"), "jaxdbg-next");
  const bReturn = button("Return", tip("return"), "jaxdbg-return");
  const stepping = h("span", "jaxdbg-stepping");
  stepping.append(bStep, bNext, bReturn);
  const busy = h("span", "jaxdbg-busy");
  busy.setAttribute("role", "status");
  // Disable and Ignore change later hits and do not resume (as in pdb): grouped apart
  // from the buttons that go on, with words saying so.
  const manyStops = h("span", "jaxdbg-many-stops");
  const staysPaused = h("span", "jaxdbg-stays-paused");
  staysPaused.append(bDisable, ignoreCount, bIgnore, h("span", "jaxdbg-stays-note", "(stays paused)"));
  manyStops.append(bAll, staysPaused);
  toolbar.append(bContinue, bUp, bDown, bSkip, bReplay, stepping, manyStops, bQuit, busy);

  bContinue.onclick = () => run("continue");
  bUp.onclick = () => run("up");
  bDown.onclick = () => run("down");
  bSkip.onclick = () => run("skip");
  bQuit.onclick = () => run("quit");
  bReplay.onclick = () => run("replay");
  bStep.onclick = () => run("step");
  bNext.onclick = () => run("next");
  bReturn.onclick = () => run("return");
  bAll.onclick = () => run("continue all");
  bDisable.onclick = () => run("disable");
  bIgnore.onclick = () => {
    const n = Math.max(1, parseInt(ignoreCount.value, 10) || 1);
    run(`ignore ${n}`);
  };

  function draw(s, kernelGone) {
    banner.textContent = s.banner || "";
    reason.textContent = s.reason || "";
    reason.hidden = !s.reason;
    note.textContent = s.note || "";
    note.hidden = !s.note;
    const focused = document.activeElement;
    bSkip.hidden = !s.batched;
    // A post-mortem or a reopened saved stop has no breakpoint to pass or disable, and
    // a frame without its code cannot be replayed: only what applies shows.
    // The many-stops buttons show where the command table has their commands.
    manyStops.hidden = !MANY_STOPS.every((line) => tips[line]) || s.for_breakpoint === false;
    bUp.disabled = !!s.oldest || !!s.finished || kernelGone;
    bDown.disabled = !!s.newest || !!s.finished || kernelGone;
    for (const b of [bContinue, bSkip, bQuit, bAll, bDisable, bIgnore, bReplay, bStep, bNext, bReturn]) {
      b.disabled = !!s.finished || kernelGone;
    }
    bReplay.hidden = !tips.replay || !!s.replaying || s.can_replay === false;
    stepping.hidden = !s.replaying;
    // A focused button that is now disabled would drop the focus to the page (Space on
    // Down at the innermost frame): it goes to the button that still moves, or Continue.
    if (focused instanceof HTMLButtonElement && focused.disabled && toolbar.contains(focused)) {
      const next = [focused === bDown ? bUp : bDown, bContinue].find((b) => !b.disabled && !b.hidden);
      if (next) next.focus();
    }
  }

  // The buttons the keyboard shortcuts press, by SHORTCUTS name.
  const shortcutButtons = { continue: bContinue, up: bUp, down: bDown, quit: bQuit };
  return { header, toolbar, busy, shortcutButtons, draw };
}

// -- frames and source ------------------------------------------------------------
// The frames and source boxes are as tall as the longer of the two needs (up to the
// source window's lines), and never shrink while this view shows: navigating does not
// move what is below. Lines they do not need go to the locals table.
function bodySizer(model, root) {
  let bodyLines = 0;
  return function sizeBody() {
    const src = model.get("source") || {};
    const most = 2 * (src.context || 8) + 1;
    const need = Math.max((model.get("frames") || []).length, (src.lines || []).length, 4);
    bodyLines = Math.min(most, Math.max(bodyLines, need));
    root.style.setProperty("--jaxdbg-body-lines", String(bodyLines));
    root.style.setProperty("--jaxdbg-spare-lines", String(most - bodyLines));
  };
}

function framesArea(model, run, sizeBody) {
  const framesBox = h("div", "jaxdbg-frames");
  framesBox.setAttribute("role", "listbox");
  framesBox.setAttribute("aria-label", "frames, innermost first");
  // One option is in the Tab order (the selected one, or the one the arrows moved to);
  // ↑/↓, Home and End move between them, Enter or Space selects.
  const rows = () => [...framesBox.children];
  function focusRow(row) {
    if (!row) return;
    for (const r of rows()) r.tabIndex = r === row ? 0 : -1;
    row.focus();
    row.scrollIntoView({ block: "nearest" });
  }
  framesBox.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return; // Alt+↑/↓ are the panel's Up / Down
    const row = e.target.closest(".jaxdbg-frame");
    if (!row) return;
    const all = rows();
    const at = all.indexOf(row);
    const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: all.length - 1 }[e.key];
    if (to !== undefined) {
      e.preventDefault();
      focusRow(all[Math.max(0, Math.min(all.length - 1, to))]);
    } else if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      run(`frame ${row.dataset.index}`);
    }
  });

  function draw() {
    sizeBody();
    const selected = model.get("selected");
    const hadFocus = framesBox.contains(document.activeElement) ? document.activeElement.dataset.index : null;
    framesBox.replaceChildren();
    (model.get("frames") || []).forEach((f) => {
      const i = f.index;
      if (f.fold !== undefined) {
        // A run of installed libraries' frames, one row ("… 5 frames in flax"); selecting
        // it selects its first frame, which then shows on its own row.
        const row = h("div", "jaxdbg-frame jaxdbg-frame-fold");
        row.setAttribute("role", "option");
        row.setAttribute("aria-selected", "false");
        row.title = `${f.fold}: select the first ('library_frames on' lists them all)`;
        row.dataset.index = String(i);
        row.append(h("span", "jaxdbg-frame-index", ""), h("span", "jaxdbg-frame-function", f.fold));
        row.tabIndex = -1;
        row.onclick = () => run(`frame ${i}`);
        framesBox.append(row);
        return;
      }
      const row = h("div", "jaxdbg-frame" + (i === selected ? " jaxdbg-selected" : "")
                          + (f.replay ? " jaxdbg-frame-replay" : ""));
      row.setAttribute("role", "option");
      row.setAttribute("aria-selected", String(i === selected));
      row.title = f.path;
      row.dataset.index = String(i);
      const name = h("span", "jaxdbg-frame-function", f.function);
      // A frame of a replay run from the stop: marked after its name (the stop's are below).
      if (f.replay) name.append(h("span", "jaxdbg-frame-mark", shared(model).PHRASES.replayMark));
      row.append(h("span", "jaxdbg-frame-index", i), name, h("span", "jaxdbg-frame-where", f.where));
      row.tabIndex = i === selected ? 0 : -1;
      row.onclick = () => run(`frame ${i}`);
      framesBox.append(row);
    });
    if (hadFocus !== null) {
      focusRow(rows().find((r) => r.dataset.index === hadFocus) || framesBox.firstChild);
    }
  }

  function drawSelected() {
    const selected = model.get("selected");
    const moving = framesBox.contains(document.activeElement); // the arrows keep their place
    for (const row of framesBox.children) {
      const on = Number(row.dataset.index) === selected && !row.classList.contains("jaxdbg-frame-fold");
      row.classList.toggle("jaxdbg-selected", on);
      row.setAttribute("aria-selected", String(on));
      if (!moving) row.tabIndex = on ? 0 : -1;
      if (on) row.scrollIntoView({ block: "nearest" });
    }
  }

  return { node: framesBox, draw, drawSelected };
}

function sourceArea(model, sizeBody) {
  const { PHRASES } = shared(model);
  const sourceBox = h("div", "jaxdbg-source-box");
  const sourceHeading = h("div", "jaxdbg-source-heading");
  const source = h("div", "jaxdbg-source");
  sourceBox.append(sourceHeading, source);

  function draw() {
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

  return { node: sourceBox, draw };
}

// -- locals -------------------------------------------------------------------------
// The first rows come with the state; more are asked for as the table scrolls to its
// end, a big array's statistics once its row is shown, a container's children when
// it is expanded. Replies are custom messages: onLocals, onStats, onChildren.
function localsArea(model, run, openView, fillConsole) {
  const { TO_KERNEL, PHRASES } = shared(model);
  const colours = pictureColours(model);
  const thumbnails = new Map(); // path key -> {pic, codes} of this frame, drawn again on redraw
  let loadedLocals = 0;
  let requestedLocals = -1;

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

  function pathKey(path) {
    return JSON.stringify(path);
  }

  // A child's name below its parent's, as Python spells it: a field (`.kernel`), an
  // item (`[0]`) or a key (`['w']`).
  function childLabel(parent, child) {
    if (child.startsWith("[")) return parent + child;
    if (/^[A-Za-z_]\w*$/.test(child)) return `${parent}.${child}`;
    return `${parent}[${child}]`;
  }

  // `label` is what the row's controls name: the local, or the path to a child
  // (`params['w']`, `state.kernel`, `xs[0]`).
  function localRow(r, path, depth, label = r.name) {
    const tr = h("tr", "jaxdbg-local" + (r.nonfinite ? " jaxdbg-nonfinite" : ""));
    tr.dataset.path = pathKey(path);
    tr.dataset.label = label;
    const name = h("td", "jaxdbg-col-name");
    name.style.paddingLeft = `${4 + depth * 14}px`;
    if (r.expandable) {
      const t = h("button", "jaxdbg-toggle", "▸");
      t.type = "button";
      t.title = "expand";
      t.setAttribute("aria-label", `expand ${label}`);
      t.setAttribute("aria-expanded", "false");
      t.onclick = (e) => {
        e.stopPropagation();
        toggle(tr, t, path, depth);
      };
      name.append(t);
    } else {
      name.append(h("span", "jaxdbg-toggle-space"));
    }
    if (depth === 0) {
      // A button, so Tab reaches it and Enter / Space run it as a click does.
      const nameButton = h("button", "jaxdbg-name jaxdbg-clickable", r.name);
      nameButton.type = "button";
      nameButton.title = `show ${r.name} in full (pp ${r.name})`;
      nameButton.setAttribute("aria-label", `show ${r.name} in full (pp ${r.name})`);
      nameButton.onclick = () => run(`pp ${r.name}`);
      name.append(nameButton);
    } else {
      // A child of a pytree (a Module's layer, a leaf): its path as an expression of the
      // frame goes into the console, to print it or to edit first.
      const pathButton = h("button", "jaxdbg-name jaxdbg-clickable jaxdbg-path", r.name);
      pathButton.type = "button";
      pathButton.title = `p ${label}`;
      pathButton.setAttribute("aria-label", `put p ${label} in the console`);
      pathButton.onclick = () => fillConsole(`p ${label}`);
      name.append(pathButton);
    }
    const array = h("td", "jaxdbg-col-array");
    if (r.picture) array.append(thumbnail(path, label), " ");
    array.append(r.array);
    tr.append(name, h("td", "jaxdbg-col-type", r.type), array,
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

  // A small picture, asked for once its row scrolls into view (as big rows' statistics
  // are); a click opens the large view.
  function thumbnail(path, label) {
    const canvas = h("canvas", "jaxdbg-thumb");
    canvas.dataset.path = pathKey(path);
    canvas.title = `open the array view of ${label}`;
    canvas.width = canvas.height = 1;
    canvas.tabIndex = 0;
    canvas.setAttribute("role", "button");
    canvas.setAttribute("aria-label", `open the array view of ${label}`);
    const open = (e) => {
      e.stopPropagation();
      openView((model.get("locals_page") || {}).frame, path, canvas);
    };
    canvas.onclick = open;
    canvas.onkeydown = (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(e); } };
    const known = thumbnails.get(canvas.dataset.path);
    if (known) drawThumbnail(canvas, colours, known.pic, known.codes);
    else if (thumbObserver) thumbObserver.observe(canvas);
    else requestPicture(canvas);
    return canvas;
  }

  function requestPicture(canvas) {
    model.send({ type: TO_KERNEL.PICTURE, frame: (model.get("locals_page") || {}).frame,
                 path: JSON.parse(canvas.dataset.path) });
  }

  function onPicture(msg, buffers) {
    const page = model.get("locals_page") || {};
    if (msg.frame !== page.frame) return;
    const key = pathKey(msg.path);
    for (const canvas of tbody.querySelectorAll(`canvas.jaxdbg-thumb[data-path='${CSS.escape(key)}']`)) {
      if (!msg.picture) {
        canvas.title = msg.error;
        continue;
      }
      const known = { pic: msg.picture, codes: new Uint8Array(bufferBytes(buffers[0])) };
      thumbnails.set(key, known);
      drawThumbnail(canvas, colours, known.pic, known.codes);
      canvas.dataset.drawn = "1";
    }
  }

  function onStats(msg) {
    const page = model.get("locals_page") || {};
    if (msg.frame !== page.frame) return;
    const old = tbody.querySelector(`tr[data-path='${CSS.escape(pathKey(msg.path))}']`);
    if (old) old.replaceWith(localRow(msg.row, msg.path, msg.path.length - 1, old.dataset.label));
  }

  function toggle(tr, t, path, depth) {
    const open = t.getAttribute("aria-expanded") === "true";
    if (open) {
      const prefix = pathKey(path).slice(0, -1) + ",";
      for (const row of [...tbody.querySelectorAll("tr")]) if (row.dataset.path.startsWith(prefix)) row.remove();
      t.setAttribute("aria-expanded", "false");
      t.setAttribute("aria-label", `expand ${tr.dataset.label}`);
      t.title = "expand";
      t.textContent = "▸";
      return;
    }
    t.setAttribute("aria-expanded", "true");
    t.setAttribute("aria-label", `collapse ${tr.dataset.label}`);
    t.title = "collapse";
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
      const row = localRow(r, [...msg.path, i], depth, childLabel(parent.dataset.label, r.name));
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
  const thumbObserver = typeof IntersectionObserver === "function"
    ? new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (!e.isIntersecting) continue;
        thumbObserver.unobserve(e.target);
        requestPicture(e.target);
      }
    }, { root: localsWrap, rootMargin: "40px" })
    : null;
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

  let drawnFrame = null;
  function draw() {
    const page = model.get("locals_page") || {};
    // Room for the longest frame's table (up to the box's maximum height), so that
    // selecting another frame never moves what is below.
    localsWrap.style.setProperty("--jaxdbg-locals-rows", String(Math.max(1, page.most || 0)));
    if (thumbObserver) thumbObserver.disconnect();
    if (page.frame !== drawnFrame) thumbnails.clear();
    drawnFrame = page.frame;
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
    // The observer speaks only when the loading row enters or leaves the view. Held at the
    // table's bottom (End held, a fast wheel) it may never be seen to leave it while these
    // rows come: observed afresh, it says where it is now, and asks for the next page.
    if (observer) {
      observer.unobserve(sentinel);
      observer.observe(sentinel);
    }
  }

  function dispose() {
    if (observer) observer.disconnect();
    if (thumbObserver) thumbObserver.disconnect();
  }

  return { node: localsWrap, draw, onLocals, onStats, onChildren, onPicture, dispose };
}

// -- array pictures -------------------------------------------------------------------
// Pictures arrive as a JSON description plus binary buffers (DataViews): the colour code
// of each kept cell (uint8), and for the large view the values (float64) and the array
// indices of the kept rows and columns (int32); the values are float32 or float64, as
// the picture's `values` names. Codes are drawn with the colour table
// synced once in `picture_colours` (jaxdbg.views.palette).
function pictureColours(model) {
  const colours = model.get("picture_colours") || { table: [], classes: {} };
  const rgb = colours.table.map((hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)));
  return { ...colours, rgb };
}

function bufferBytes(view) {
  return view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength);
}

// An offscreen canvas of the codes at one pixel per cell (scaled up without smoothing).
function codesCanvas(colours, codes, rows, cols) {
  const image = document.createElement("canvas");
  image.width = cols;
  image.height = rows;
  const ctx = image.getContext("2d");
  const data = ctx.createImageData(cols, rows);
  for (let i = 0; i < rows * cols; i++) {
    const c = colours.rgb[codes[i]] || [128, 128, 128];
    data.data[4 * i] = c[0];
    data.data[4 * i + 1] = c[1];
    data.data[4 * i + 2] = c[2];
    data.data[4 * i + 3] = 255;
  }
  ctx.putImageData(data, 0, 0);
  return image;
}

function drawThumbnail(canvas, colours, pic, codes) {
  const image = codesCanvas(colours, codes, pic.rows, pic.cols);
  canvas.width = pic.cols;
  canvas.height = pic.rows;
  canvas.getContext("2d").drawImage(image, 0, 0);
  // One text line high; a long row is drawn wider (up to four times its height).
  const aspect = Math.min(4, Math.max(1, pic.cols / pic.rows));
  canvas.style.width = `calc(${aspect} * 1.1em)`;
}

function formatValue(x, integer) {
  if (Number.isNaN(x)) return "nan";
  if (x === Infinity) return "inf";
  if (x === -Infinity) return "-inf";
  if (integer) return String(Math.round(x));
  return Number(x.toPrecision(7)).toString();
}

// The large view of one array: heatmap with shard boundaries, hover, colour scale and
// legend, axis choice and sliders for N-D, histogram, statistics. open(frame, path)
// asks the kernel for it; onView(msg, buffers) draws the answer.
function arrayViewArea(model) {
  const { TO_KERNEL } = shared(model);
  const colours = pictureColours(model);
  const MAX_SIDE = 512; // CSS pixels the heatmap may take
  const box = h("div", "jaxdbg-array-view");
  box.hidden = true;
  const head = h("div", "jaxdbg-array-head");
  const title = h("span", "jaxdbg-array-title");
  const close = button("×", "close the array view", "jaxdbg-array-close");
  close.setAttribute("aria-label", "close the array view");
  let opener = null; // the picture that opened the view: the focus goes back to it
  close.onclick = () => {
    const back = box.contains(document.activeElement) && opener && opener.isConnected ? opener : null;
    box.hidden = true;
    current = null;
    if (back) back.focus();
  };
  head.append(title, close);
  const note = h("div", "jaxdbg-array-note");
  const controls = h("div", "jaxdbg-array-controls");
  const stage = h("div", "jaxdbg-array-stage");
  const heat = h("canvas", "jaxdbg-array-heatmap");
  const tip = h("div", "jaxdbg-array-hover");
  tip.setAttribute("aria-live", "polite");
  stage.append(heat);
  const legend = h("div", "jaxdbg-array-legend");
  const hist = h("canvas", "jaxdbg-array-histogram");
  const histNote = h("div", "jaxdbg-array-hist-note");
  const stats = h("div", "jaxdbg-array-stats");
  const error = h("div", "jaxdbg-array-error");
  const nonfinite = nonfiniteList((cell) => goTo(cell));
  box.append(head, note, controls, nonfinite.node, stage, tip, legend, hist, histNote, stats, error);

  let current = null; // {frame, path, axes, indices, ...the last drawn picture}

  function open(frame, path, from = null) {
    opener = from;
    current = { frame, path, axes: null, indices: {}, sampling: "strided", target: null };
    box.hidden = false;
    request();
  }

  function request() {
    if (!current) return;
    model.send({ type: TO_KERNEL.VIEW, frame: current.frame, path: current.path,
                 axes: current.axes, indices: current.indices, sampling: current.sampling });
  }

  function close_if_frame_changed(frame) {
    if (current && current.frame !== frame) { box.hidden = true; current = null; }
  }

  function drawControls(pic) {
    controls.replaceChildren();
    if (pic.sampled || current.sampling !== "strided") {
      // A big slice: every k-th row and column, or its first and last ones.
      const label = h("label", "jaxdbg-array-sampling", "sample: ");
      const select = h("select");
      for (const [value, text] of [["strided", "evenly spaced"], ["edges", "first and last"]]) {
        const o = h("option", "", text);
        o.value = value;
        select.append(o);
      }
      select.value = current.sampling;
      select.onchange = () => { current.sampling = select.value; request(); };
      label.append(select);
      controls.append(label);
    }
    const ndim = pic.shape.length;
    if (ndim <= 2) return;
    for (const [which, position] of [["rows", 0], ["columns", 1]]) {
      const label = h("label", "jaxdbg-array-axis", `${which}: axis `);
      const select = h("select");
      select.dataset.role = which;
      for (let a = 0; a < ndim; a++) {
        const o = h("option", "", String(a));
        o.value = String(a);
        select.append(o);
      }
      select.value = String(pic.axes[position]);
      select.onchange = () => {
        const axes = [...pic.axes];
        const chosen = Number(select.value);
        if (axes[1 - position] === chosen) axes[1 - position] = axes[position]; // swap
        axes[position] = chosen;
        current.axes = axes;
        current.indices = {};
        pic.index.forEach((i, a) => { if (i !== null && !axes.includes(a)) current.indices[a] = i; });
        request();
      };
      label.append(select);
      controls.append(label);
    }
    pic.index.forEach((i, axis) => {
      if (i === null) return;
      const label = h("label", "jaxdbg-array-slider");
      const text = h("span", "", `axis ${axis}: ${i}`);
      const slider = h("input");
      slider.type = "range";
      slider.min = "0";
      slider.max = String(pic.shape[axis] - 1);
      slider.value = String(i);
      slider.dataset.axis = String(axis);
      slider.title = `index along axis ${axis}`;
      slider.oninput = () => {
        text.textContent = `axis ${axis}: ${slider.value}`;
        current.indices = { ...current.indices, [axis]: Number(slider.value) };
        current.target = null; // another slice: the ring and its line go
        request();
      };
      label.append(text, slider);
      controls.append(label);
    });
  }

  function drawHeatmap(pic, codes) {
    const cell = Math.max(1, Math.min(32, Math.floor(MAX_SIDE / Math.max(pic.rows, pic.cols))));
    const cellH = pic.rows === 1 ? Math.max(cell, 24) : cell;
    heat.width = pic.cols * cell;
    heat.height = pic.rows * cellH;
    const ctx = heat.getContext("2d");
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(codesCanvas(colours, codes, pic.rows, pic.cols), 0, 0, heat.width, heat.height);
    // Shard boundaries: where the kept rows / columns cross into the next shard.
    const [under, over] = colours.shard_line || ["#000000", "#ffffff"];
    const line = (x0, y0, x1, y1) => {
      for (const [colour, width] of [[under, 3], [over, 1]]) {
        ctx.strokeStyle = colour;
        ctx.lineWidth = width;
        ctx.beginPath();
        ctx.moveTo(x0, y0);
        ctx.lineTo(x1, y1);
        ctx.stroke();
      }
    };
    const place = (kept, cut) => kept.findIndex((k) => k >= cut);
    for (const cut of pic.row_cuts) {
      const r = place(current.rowIndex, cut);
      if (r > 0) line(0, r * cellH, heat.width, r * cellH);
    }
    for (const cut of pic.col_cuts) {
      const c = place(current.colIndex, cut);
      if (c > 0) line(c * cell, 0, c * cell, heat.height);
    }
    current.cell = cell;
    current.cellH = cellH;
  }

  // Where a NaN / Inf of the whole array is in this picture: its kept row and column,
  // or null when the slice shown does not hold it (another index along a hidden axis).
  function placeOf(index) {
    const pic = current.pic;
    if (pic.index.some((i, axis) => i !== null && i !== index[axis])) return null;
    const r = pic.axes[0] === null ? 0 : current.rowIndex.indexOf(index[pic.axes[0]]);
    const c = pic.shape.length ? current.colIndex.indexOf(index[pic.axes[1]]) : 0;
    return r < 0 || c < 0 ? null : { r, c };
  }

  // Show one NaN / Inf cell: the slice that holds it, a ring around it, its value below.
  function goTo(target) {
    if (!current || !current.pic) return;
    current.target = target;
    const pic = current.pic;
    const hidden = {};
    target.index.forEach((i, axis) => { if (pic.index[axis] !== null) hidden[axis] = i; });
    if (Object.entries(hidden).some(([axis, i]) => pic.index[axis] !== i)) {
      current.indices = hidden;
      request(); // the answer is drawn with the ring (onView)
      return;
    }
    markTarget();
  }

  function markTarget() {
    const target = current.target;
    if (!target) return;
    drawHeatmap(current.pic, current.codes);
    const at = placeOf(target.index);
    const where = `${current.name}[${target.index.join(", ")}]`;
    if (!at) {
      tip.textContent = `${where} = ${target.kind} (not among the sampled cells)`;
      return;
    }
    const ctx = heat.getContext("2d");
    const [under, over] = colours.shard_line || ["#000000", "#ffffff"];
    const pad = 2;
    for (const [colour, width] of [[under, 4], [over, 2]]) {
      ctx.strokeStyle = colour;
      ctx.lineWidth = width;
      ctx.strokeRect(at.c * current.cell - pad, at.r * current.cellH - pad,
                     current.cell + 2 * pad, current.cellH + 2 * pad);
    }
    tip.textContent = `${where} = ${formatValue(current.values[at.r * current.pic.cols + at.c], current.pic.integer)}`;
    heat.scrollIntoView({ block: "nearest" });
  }

  function drawLegend(pic) {
    legend.replaceChildren();
    const scale = h("canvas", "jaxdbg-array-scale");
    scale.width = 128;
    scale.height = 10;
    const ctx = scale.getContext("2d");
    for (let x = 0; x < 128; x++) {
      const c = colours.rgb[Math.round((x / 127) * (colours.levels - 1))];
      ctx.fillStyle = `rgb(${c[0]},${c[1]},${c[2]})`;
      ctx.fillRect(x, 0, 1, 10);
    }
    legend.append(h("span", "jaxdbg-array-low", formatValue(pic.low ?? NaN, pic.integer)), scale,
                  h("span", "jaxdbg-array-high", formatValue(pic.high ?? NaN, pic.integer)));
    for (const [name, cls] of Object.entries(colours.classes)) {
      const item = h("span", "jaxdbg-array-class");
      const swatch = h("span", "jaxdbg-array-swatch");
      swatch.style.background = cls.colour;
      item.append(swatch, `${name} ${(pic.classes[name] || 0).toLocaleString()}`);
      legend.append(item);
    }
  }

  function drawHistogram(pic) {
    const bins = pic.histogram.length;
    hist.width = 256;
    hist.height = 48;
    const ctx = hist.getContext("2d");
    ctx.clearRect(0, 0, hist.width, hist.height);
    const most = Math.max(1, ...pic.histogram);
    const w = hist.width / bins;
    pic.histogram.forEach((n, b) => {
      const c = colours.rgb[Math.round(((b + 0.5) / bins) * (colours.levels - 1))];
      ctx.fillStyle = `rgb(${c[0]},${c[1]},${c[2]})`;
      const bar = n ? Math.max(1, Math.round((n / most) * hist.height)) : 0;
      ctx.fillRect(b * w, hist.height - bar, Math.max(1, w - 1), bar);
    });
    histNote.textContent = `histogram of the finite values shown${pic.sampled ? " (sampled)" : ""}, ` +
      `${formatValue(pic.low ?? NaN, pic.integer)} .. ${formatValue(pic.high ?? NaN, pic.integer)}; statistics of the whole array:`;
  }

  function onView(msg, buffers) {
    if (!current || msg.frame !== current.frame || JSON.stringify(msg.path) !== JSON.stringify(current.path)) return;
    error.textContent = msg.error || "";
    if (!msg.picture) return;
    const pic = msg.picture;
    const codes = new Uint8Array(bufferBytes(buffers[0]));
    Object.assign(current, {
      pic, name: msg.name, codes,
      values: new (pic.values === "float32" ? Float32Array : Float64Array)(bufferBytes(buffers[1])),
      rowIndex: Array.from(new Int32Array(bufferBytes(buffers[2]))),
      colIndex: Array.from(new Int32Array(bufferBytes(buffers[3]))),
      axes: pic.shape.length > 1 ? [pic.axes[0], pic.axes[1]] : null,
    });
    title.textContent = `${msg.name}  ${pic.dtype}[${pic.shape.join(",")}]`;
    note.textContent = pic.note;
    stats.textContent = msg.stats;
    drawControls(pic);
    drawHeatmap(pic, codes);
    drawLegend(pic);
    drawHistogram(pic);
    tip.textContent = "";
    nonfinite.draw(pic.nonfinite, msg.name);
    markTarget();
    box.dataset.drawn = String(Number(box.dataset.drawn || 0) + 1); // tests wait on this
  }

  heat.addEventListener("mousemove", (e) => {
    if (!current || !current.pic) return;
    const rect = heat.getBoundingClientRect();
    const x = ((e.clientX - rect.left) * heat.width) / rect.width;
    const y = ((e.clientY - rect.top) * heat.height) / rect.height;
    const c = Math.floor(x / current.cell);
    const r = Math.floor(y / current.cellH);
    const pic = current.pic;
    if (r < 0 || c < 0 || r >= pic.rows || c >= pic.cols) return;
    const index = pic.index.map((i) => i);
    if (pic.axes[0] !== null) index[pic.axes[0]] = current.rowIndex[r];
    if (pic.shape.length) index[pic.axes[1]] = current.colIndex[c];
    tip.textContent = `${current.name}[${index.join(", ")}] = ${formatValue(current.values[r * pic.cols + c], pic.integer)}`;
  });
  heat.addEventListener("mouseleave", () => { tip.textContent = ""; });

  return { node: box, open, onView, closeIfFrameChanged: close_if_frame_changed };
}

// The array's NaN / Inf cells under its large view: a "Next NaN / Inf" button that
// walks them and a button per listed cell; onPick(cell) shows one.
function nonfiniteList(onPick) {
  const node = h("div", "jaxdbg-array-nonfinite");
  node.hidden = true;
  const next = button("Next NaN / Inf", "show the next NaN or Inf cell of this array", "jaxdbg-array-next-nan");
  const count = h("span", "jaxdbg-array-nonfinite-count");
  const list = h("span", "jaxdbg-array-nonfinite-cells");
  node.append(next, count, list);
  let cells = [];
  let at = -1;
  next.onclick = () => {
    if (!cells.length) return;
    at = (at + 1) % cells.length;
    onPick(cells[at]);
  };

  function draw(info, name) {
    const fresh = JSON.stringify((info && info.cells) || []) !== JSON.stringify(cells);
    cells = (info && info.cells) || [];
    if (fresh) at = -1;
    node.hidden = !info || !info.count;
    if (node.hidden) return;
    next.setAttribute("aria-label", `go to the next NaN or Inf of ${name}`);
    count.textContent = `${info.count.toLocaleString()} NaN / Inf:`;
    list.replaceChildren();
    cells.forEach((c, i) => {
      const where = `[${c.index.join(", ")}]`;
      const b = button(`${where} ${c.kind}`, `show ${name}${where}`, "jaxdbg-array-nonfinite-cell");
      b.setAttribute("aria-label", `show ${name}${where}, ${c.kind}`);
      b.onclick = () => { at = i; onPick(c); };
      list.append(b);
    });
    if (info.count > cells.length) list.append(h("span", "", `and ${(info.count - cells.length).toLocaleString()} more`));
  }

  return { node, draw };
}

// -- console: the log -------------------------------------------------------------
// The entries the kernel keeps (commands and their output), then the lines sent and
// not yet handled; `busy` says "running…" while there are some.
function consoleLog(model, pending, busy, root) {
  const { TO_KERNEL, PHRASES, moreCharacters } = shared(model);
  const logBox = h("div", "jaxdbg-log");
  logBox.setAttribute("role", "log");

  function echo(cmd, pretty) {
    return PHRASES.prompt + (pretty ? "pp " : "") + cmd;
  }

  function draw() {
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

  return { node: logBox, draw };
}

// -- console: the input, its history and completion -------------------------------
// ↑/↓ walk the lines typed (those of earlier stops first); the line being typed is
// kept as a draft and comes back below the newest.
function inputHistory(lines) {
  const history = [...lines];
  let pos = history.length;
  let draft = "";
  return {
    add(line) {
      if (history[history.length - 1] !== line) history.push(line);
      pos = history.length;
      draft = "";
    },
    // The line before, or null at the oldest; `current` is kept when leaving the draft.
    older(current) {
      if (pos === history.length) draft = current;
      return pos > 0 ? history[--pos] : null;
    },
    // The line after (the draft below the newest), or null when at the draft.
    newer() {
      if (pos >= history.length) return null;
      pos += 1;
      return pos === history.length ? draft : history[pos];
    },
  };
}

// Tab asks the kernel; one match is put in at once, several open a list of the
// completed words. While the list is open it narrows as you type, ↓/↑ move in it,
// Enter or Tab puts the highlighted one in, Esc closes it.
function completer(model, input, completions) {
  const { TO_KERNEL } = shared(model);
  let completionId = 0;
  let choices = null; // {head, rest, items: [full line], shown: [full line], active}
  let settled = null; // the text a completion has nothing more for: Tab then moves on

  // Whether Tab completes (a word is being typed and may go further) or leaves the
  // console, as Tab does everywhere else.
  function wouldComplete() {
    const typed = input.value.slice(0, caret());
    return !!choices || (/\S$/.test(typed) && input.value !== settled);
  }

  function request() {
    completionId += 1;
    model.send({ type: TO_KERNEL.COMPLETE, id: completionId, text: input.value.slice(0, caret()) });
  }

  function caret() {
    return input.selectionStart ?? input.value.length;
  }

  // The keys of an open list; true when the key was the list's.
  function key(e) {
    if (!choices) return false;
    const n = choices.shown.length;
    if (e.key === "ArrowDown" && !e.altKey) choices.active = (choices.active + 1) % n;
    else if (e.key === "ArrowUp" && !e.altKey) choices.active = (choices.active - 1 + n) % n;
    else if ((e.key === "Enter" || (e.key === "Tab" && !e.shiftKey)) && !e.altKey) pick(choices.shown[choices.active]);
    else if (e.key === "Escape") hide();
    else return false;
    e.preventDefault();
    draw();
    return true;
  }

  function pick(full) {
    const rest = choices ? choices.rest : "";
    hide();
    setInput(full + rest, full.length);
  }

  function hide() {
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
    hide();
    if (!matches.length) {
      settled = input.value;
      return;
    }
    const prefix = commonPrefix(matches);
    if (prefix.length > text.length) {
      input.value = prefix + rest;
      input.setSelectionRange(prefix.length, prefix.length);
    }
    if (matches.length === 1) {
      settled = input.value;
      return;
    }
    choices = { head: prefix.slice(0, wordStart(prefix)), rest, items: matches, shown: matches, active: 0 };
    draw();
  }

  // Typing on (or deleting) while the list is open keeps the items that still fit.
  function narrow() {
    if (!choices) return;
    const typed = input.value.slice(0, caret());
    if (!typed.startsWith(choices.head) || /\W/.test(typed.slice(choices.head.length))) {
      hide();
      return;
    }
    choices.rest = input.value.slice(caret());
    choices.shown = choices.items.filter((m) => m.startsWith(typed) && m !== typed);
    choices.active = 0;
    if (!choices.shown.length) hide();
    else draw();
  }

  function draw() {
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

  return { isOpen: () => !!choices, wouldComplete, key, hide, request, onCompletions, narrow };
}

// Notebook shortcuts that run no code go on to the notebook: save (Ctrl/Cmd+S) and
// Esc (unless it closes the completion list).
function reachesNotebook(e, listOpen) {
  const save = (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === "s";
  return save || (e.key === "Escape" && !listOpen);
}

function consoleInput(model, run) {
  const inputRow = h("div", "jaxdbg-input-row");
  const prompt = h("span", "jaxdbg-prompt", "(jaxdbg)");
  const input = h("input", "jaxdbg-input");
  input.type = "text";
  input.spellcheck = false;
  input.autocomplete = "off";
  input.placeholder = "expression, statement or command; Enter runs it, Tab completes, ↑/↓ history";
  input.setAttribute("aria-label", "debugger console: an expression, statement or command");
  const ppLabel = h("label", "jaxdbg-pp");
  const pp = h("input");
  pp.type = "checkbox";
  ppLabel.title = "pretty-print results (pp)";
  pp.setAttribute("aria-label", "pretty-print results (pp)");
  ppLabel.append(pp, document.createTextNode(" pp"));
  const completions = h("div", "jaxdbg-completions");
  completions.setAttribute("role", "listbox");
  inputRow.append(prompt, input, ppLabel, completions);

  const history = inputHistory(model.get("history") || []);
  const completion = completer(model, input, completions);

  input.addEventListener("keydown", (e) => {
    if (Object.values(SHORTCUTS).some((s) => s.test(e))) return; // the panel handles them
    if (reachesNotebook(e, completion.isOpen())) return;
    // Keys typed here belong to the debugger, not to the notebook around it
    // (Shift+Enter must not queue a cell run behind the paused one).
    e.stopPropagation();
    if (completion.key(e)) return;
    if (e.key === "Enter") {
      e.preventDefault();
      const line = input.value;
      input.value = "";
      completion.hide();
      if (!line.trim()) return;
      history.add(line);
      run(line, { typed: true, pretty: pp.checked });
    } else if (e.key === "ArrowUp" && !e.altKey) {
      e.preventDefault();
      const older = history.older(input.value);
      if (older !== null) input.value = older;
    } else if (e.key === "ArrowDown" && !e.altKey) {
      e.preventDefault();
      const newer = history.newer();
      if (newer !== null) input.value = newer;
    } else if (e.key === "Tab" && !e.shiftKey && completion.wouldComplete()) {
      e.preventDefault();
      completion.request();
    } // any other Tab leaves the console (to the pp box), as Tab does
  });
  input.addEventListener("keyup", (e) => e.stopPropagation());
  input.addEventListener("keypress", (e) => e.stopPropagation());
  input.addEventListener("input", completion.narrow);

  // A key typed on one of the panel's buttons or pictures lands here, at the caret.
  function typeKey(key) {
    input.focus();
    input.setRangeText(key, input.selectionStart ?? input.value.length,
                       input.selectionEnd ?? input.value.length, "end");
    completion.narrow();
  }

  // A line put in the console for the user to run or edit (a tree leaf's `p model.l1.kernel`).
  function fill(text) {
    completion.hide();
    input.value = text;
    input.setSelectionRange(text.length, text.length);
    input.focus();
  }

  return { node: inputRow, input, typeKey, fill, onCompletions: completion.onCompletions,
           hideCompletions: completion.hide };
}

// -- watches and breakpoints ---------------------------------------------------------
// The Watch box runs `watch EXPR`. The watch table shows each watch's latest value and
// its history over hits: a scalar as a line plot with one dot per hit (SVG), an array
// as its min / mean / max over hits. The breakpoints table (folded) edits a breakpoint
// in place by running the commands the prompt takes: enable / disable, ignore,
// condition, log. Both redraw from the `watches` and `breakpoints` traits.
const SVG_NS = "http://www.w3.org/2000/svg";
const PLOT_W = 220;
const PLOT_H = 46;

function svg(tag, attrs) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  return node;
}

// Lines over the hit positions; `series`: [{points: [{x, y, hit, text}], cls, dots}].
// Axes labelled with the lowest and highest value and the first and last hit, so the
// plot reads without hovering (the static summary's plot draws the same).
const AXIS_FONT = 9;
const AXIS_CHAR = 5.4;
const axisNumber = (y) => String(Number(y.toPrecision(4)));

function watchPlot(series, label) {
  const plot = svg("svg", { class: "jaxdbg-watch-plot", width: PLOT_W, height: PLOT_H,
                            viewBox: `0 0 ${PLOT_W} ${PLOT_H}`, role: "img", "aria-label": label });
  const finite = series.flatMap((s) => s.points).filter((p) => Number.isFinite(p.y));
  if (!finite.length) return plot;
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  for (const p of finite) {
    x0 = Math.min(x0, p.x); x1 = Math.max(x1, p.x); y0 = Math.min(y0, p.y); y1 = Math.max(y1, p.y);
  }
  const high = axisNumber(y1), low = axisNumber(y0);
  const left = 4 + AXIS_CHAR * Math.max(high.length, low.length);
  const top = 5, bottom = PLOT_H - AXIS_FONT - 4, right = PLOT_W - 4;
  const sx = (x) => (left + ((x - x0) * (right - left)) / Math.max(x1 - x0, 1)).toFixed(1);
  // A flat history (or a single value) is drawn across the middle.
  const sy = (y) => (y1 === y0 ? (top + bottom) / 2 : bottom - ((y - y0) * (bottom - top)) / (y1 - y0)).toFixed(1);
  plot.append(svg("polyline", { class: "jaxdbg-watch-axis", fill: "none",
                                points: `${left - 1},${top - 2} ${left - 1},${bottom + 1} ${PLOT_W - 2},${bottom + 1}` }));
  const text = (x, y, anchor, content, cls) => {
    const node = svg("text", { class: "jaxdbg-watch-axis-label " + cls, x, y, "text-anchor": anchor,
                               "font-size": AXIS_FONT });
    node.textContent = content;
    plot.append(node);
  };
  const byX = [...finite].sort((a, b) => a.x - b.x);
  const hitOf = (p) => (p.hit === null ? "-" : String(p.hit));
  // A flat history has one value to label, at the middle; a single point one hit.
  if (high === low) text(left - 3, (top + bottom + AXIS_FONT) / 2 - 1, "end", high, "jaxdbg-watch-high");
  else {
    text(left - 3, top + AXIS_FONT - 2, "end", high, "jaxdbg-watch-high");
    text(left - 3, bottom, "end", low, "jaxdbg-watch-low");
  }
  text(left, PLOT_H - 2, "start", `hit ${hitOf(byX[0])}`, "jaxdbg-watch-first-hit");
  if (byX.length > 1) text(PLOT_W - 2, PLOT_H - 2, "end", hitOf(byX[byX.length - 1]), "jaxdbg-watch-last-hit");
  for (const s of series) {
    const points = s.points.filter((p) => Number.isFinite(p.y));
    plot.append(svg("polyline", { class: "jaxdbg-watch-line " + s.cls, fill: "none",
                                  points: points.map((p) => `${sx(p.x)},${sy(p.y)}`).join(" ") }));
    if (!s.dots) continue;
    for (const p of points) {
      const dot = svg("circle", { class: "jaxdbg-watch-point", cx: sx(p.x), cy: sy(p.y), r: 1.8 });
      const title = svg("title");
      title.textContent = `hit ${hitOf(p)}: ${p.text}`;
      dot.append(title);
      plot.append(dot);
    }
  }
  return plot;
}

// The plot and, beside it, its first and last values and range (`overview`: the engine's
// words, the same as the static summary's and the prompt's).
function watchHistory(w) {
  const node = h("span", "jaxdbg-watch-history-box");
  node.append(watchPlotOf(w));
  const parts = w.overview || [];
  if (parts.length && w.total > 1) {
    const overview = h("span", "jaxdbg-watch-overview");
    overview.append(h("span", "", parts.slice(0, 2).join(" · ")), h("br"), h("span", "", parts.slice(2).join(" · ")));
    node.append(overview);
  }
  return node;
}

function watchPlotOf(w) {
  const first = w.total - w.values.length + 1; // positions count from the watch's first value
  const at = (pick) => w.values.map((v, i) => ({ x: first + i, hit: v.hit, y: pick(v), text: v.error || v.text }))
    .filter((p) => p.y !== null && p.y !== undefined);
  const scalar = at((v) => v.number);
  if (scalar.length) {
    return watchPlot([{ points: scalar, cls: "jaxdbg-watch-scalar", dots: true }],
                     `${w.expression} over ${w.total} hits`);
  }
  if (w.values.some((v) => v.stats)) {
    const stat = (k) => at((v) => (v.stats ? v.stats[k] : null));
    return watchPlot([{ points: stat("min"), cls: "jaxdbg-watch-min" },
                      { points: stat("mean"), cls: "jaxdbg-watch-mean", dots: true },
                      { points: stat("max"), cls: "jaxdbg-watch-max" }],
                     `${w.expression}: min, mean and max over ${w.total} hits`);
  }
  return h("span");
}

function cell(cls, content) {
  const td = h("td", cls);
  if (content instanceof Node) td.append(content);
  else if (content !== undefined) td.textContent = String(content);
  return td;
}

// Keys typed in the panel's own inputs belong to it, not to the notebook around it.
function ownKeys(input, onEnter) {
  input.addEventListener("keydown", (e) => {
    if (Object.values(SHORTCUTS).some((s) => s.test(e)) || reachesNotebook(e, false)) return;
    e.stopPropagation();
    if (e.key === "Enter") {
      e.preventDefault();
      onEnter();
    }
  });
  input.addEventListener("keyup", (e) => e.stopPropagation());
  input.addEventListener("keypress", (e) => e.stopPropagation());
}

function watchesArea(model, run) {
  const node = h("div", "jaxdbg-watches");
  const box = h("div", "jaxdbg-watch-box");
  const input = h("input", "jaxdbg-watch-input");
  input.type = "text";
  input.spellcheck = false;
  input.autocomplete = "off";
  input.placeholder = "watch an expression at every hit of this breakpoint";
  input.setAttribute("aria-label", "expression to watch");
  const add = button("Watch", "evaluate it at every later stop of this breakpoint, a value per hit", "jaxdbg-watch-add");
  box.append(input, add);
  const table = h("table", "jaxdbg-watch-table");
  node.append(box, table);

  function submit() {
    const expr = input.value.trim();
    if (!expr) return;
    input.value = "";
    run(`watch ${expr}`);
  }
  add.onclick = submit;
  ownKeys(input, submit);

  function draw() {
    const state = model.get("watches") || {};
    node.hidden = state.breakpoint === null || state.breakpoint === undefined;
    table.replaceChildren();
    let number = 0;
    for (const w of state.watches || []) {
      number += 1; // its number in `watch`, as the prompt's commands take it
      const row = h("tr", "jaxdbg-watch-row");
      row.dataset.expression = w.expression;
      const last = w.values[w.values.length - 1];
      const shown = !last ? "" : last.error ? `*** ${last.error}` : last.text;
      const remove = button("×", `unwatch ${w.expression}`, "jaxdbg-unwatch");
      remove.setAttribute("aria-label", `unwatch ${w.expression}`);
      remove.onclick = () => run(`unwatch ${w.expression}`);
      const actions = h("span", "jaxdbg-watch-actions");
      if (w.leaves) { // a pytree: its leaves' norms on request, a plot per leaf in the console
        const command = `watch ${number} leaves`;
        const leaves = button("leaves",
                              `${command}: each leaf's norm and NaN / Inf counts, and a plot of its norm over the hits`,
                              "jaxdbg-watch-leaves");
        leaves.setAttribute("aria-label", `leaf norms of ${w.expression}`);
        leaves.onclick = () => run(command);
        actions.append(leaves);
      }
      actions.append(remove);
      row.append(cell("jaxdbg-watch-expression", w.expression),
                 cell("jaxdbg-watch-value" + (last && last.error ? " jaxdbg-error" : ""), shown),
                 cell("jaxdbg-watch-hits", `${w.total} hit${w.total === 1 ? "" : "s"}`),
                 cell("jaxdbg-watch-history", watchHistory(w)), cell("", actions));
      table.append(row);
    }
  }

  return { node, draw };
}

// Opened once, the breakpoints table stays open in the next stops' panels of this page
// (each panel loads this module afresh, so the page's session storage remembers it).
const BREAKPOINTS_OPEN = "jaxdbg-breakpoints-open";

function remembered(key) {
  try {
    return window.sessionStorage.getItem(key) === "1";
  } catch (e) {
    return false; // storage refused (sandboxed frame): every panel starts folded
  }
}

function remember(key, on) {
  try {
    window.sessionStorage.setItem(key, on ? "1" : "0");
  } catch (e) {}
}

function breakpointsArea(model, run) {
  const node = h("details", "jaxdbg-breakpoints");
  const title = h("summary", "jaxdbg-breakpoints-title", "Breakpoints");
  const table = h("table", "jaxdbg-breakpoints-table");
  node.append(title, table);
  node.open = remembered(BREAKPOINTS_OPEN);
  node.addEventListener("toggle", () => remember(BREAKPOINTS_OPEN, node.open));

  function field(value, placeholder, label, command) {
    const input = h("input", "jaxdbg-bp-field");
    input.type = "text";
    input.spellcheck = false;
    input.value = value;
    input.placeholder = placeholder;
    input.setAttribute("aria-label", label);
    let applied = value; // Enter, then leaving the field, runs the command once
    const apply = () => {
      const now = input.value.trim();
      if (now === applied) return;
      applied = now;
      run(command(now));
    };
    ownKeys(input, apply);
    input.addEventListener("change", apply);
    return input;
  }

  function draw() {
    const rows = model.get("breakpoints") || [];
    title.textContent = `Breakpoints (${rows.length})`;
    const head = h("tr");
    for (const name of ["#", "where", "hits", "enabled", "ignore", "condition", "log"]) head.append(h("th", "", name));
    table.replaceChildren(head);
    for (const r of rows) {
      const row = h("tr", "jaxdbg-bp-row");
      row.dataset.number = String(r.number);
      const enabled = h("input", "jaxdbg-bp-enabled");
      enabled.type = "checkbox";
      enabled.checked = r.enabled;
      enabled.setAttribute("aria-label", `breakpoint ${r.number} enabled`);
      enabled.onchange = () => run(`${enabled.checked ? "enable" : "disable"} ${r.number}`);
      const ignore = field(String(r.ignore), "0", `breakpoint ${r.number} ignore count`,
                           (v) => `ignore ${r.number} ${v || 0}`);
      ignore.classList.add("jaxdbg-bp-ignore");
      const condition = field(r.condition, "always", `breakpoint ${r.number} condition`,
                              (v) => `condition ${r.number} ${v}`.trim());
      condition.classList.add("jaxdbg-bp-condition");
      const log = field(r.log, "stops", `breakpoint ${r.number} log template`,
                        (v) => `log ${r.number} ${v}`.trim());
      log.classList.add("jaxdbg-bp-log");
      row.append(cell("", r.number), cell("jaxdbg-bp-where", `${r.where} in ${r.function}`),
                 cell("jaxdbg-bp-hits", r.hits), cell("", enabled), cell("", ignore),
                 cell("", condition), cell("", log));
      table.append(row);
    }
  }

  return { node, draw };
}

// -- keys -------------------------------------------------------------------------
// The panel's shortcuts press its buttons, wherever the focus is inside the panel.
// Every other key pressed inside the panel belongs to it: none reaches the notebook's
// command mode, where `d d` on a focused button deletes the paused cell and `z` brings
// it back with two live panels. JupyterLab matches its shortcuts as the keydown bubbles
// to the document (stopped here); Notebook 7 as it is captured there, before the panel
// sees it, so a focused control that takes no text carries Lumino's
// data-lm-suppress-shortcuts (text fields do not: Ctrl/Cmd+S in them still saves).
// A printable key on such a control goes to the console; Esc leaves the panel for its cell.
function panelKeys(root, buttons, console) {
  root.addEventListener("focusin", (e) => {
    if (!takesText(e.target)) e.target.setAttribute("data-lm-suppress-shortcuts", "true");
  });
  root.addEventListener("keydown", (e) => {
    for (const [name, s] of Object.entries(SHORTCUTS)) {
      if (s.test(e)) {
        e.preventDefault();
        e.stopPropagation();
        buttons[name].click();
        return;
      }
    }
    if (reachesNotebook(e, false) && e.key !== "Escape") return;
    e.stopPropagation();
    if (e.key === "Escape") {
      leavePanel(root);
    } else if (printable(e) && !takesText(e.target) && !console.input.disabled) {
      e.preventDefault();
      console.typeKey(e.key);
    }
  });
}

function printable(e) {
  return e.key.length === 1 && e.key !== " " && !e.ctrlKey && !e.metaKey && !e.altKey;
}

// Controls whose own keys are letters: text fields and lists (a select picks by letter).
function takesText(node) {
  if (node instanceof HTMLSelectElement || node instanceof HTMLTextAreaElement || node.isContentEditable) return true;
  return node instanceof HTMLInputElement && !["checkbox", "radio", "range", "button"].includes(node.type);
}

// Esc hands the focus to the nearest focusable element around the panel (the cell, in
// JupyterLab and Notebook 7: its command mode), so the notebook's keys work from there.
function leavePanel(root) {
  for (let e = root.parentElement; e; e = e.parentElement) {
    if (e.tabIndex >= 0 || e.hasAttribute("tabindex")) {
      e.focus();
      return;
    }
  }
  if (document.activeElement instanceof HTMLElement) document.activeElement.blur();
}

// -- kernel gone --------------------------------------------------------------------
// After a kernel restart or shutdown this panel's stop no longer exists: the widget
// manager marks its models' comms dead ("comm_live_update", ipywidgets 8), and the
// kernel connection reports its status. Calls onGone then; returns the undo.
function watchKernel(model, onGone) {
  const DEAD = new Set(["restarting", "autorestarting", "dead", "terminating"]);
  const kernel = model.widget_manager && model.widget_manager.kernel;

  function onKernelStatus(_sender, status) {
    if (DEAD.has(status)) onGone();
  }

  // comm_live changes also when a reloaded page reconnects a restored model: only a
  // kernel that is restarting, dead or disposed means this stop is gone.
  const onCommLive = () => {
    if (kernel && (kernel.isDisposed || DEAD.has(kernel.status))) onGone();
  };
  model.on("comm_live_update", onCommLive);
  if (kernel && kernel.statusChanged) kernel.statusChanged.connect(onKernelStatus);
  if (kernel && kernel.disposed) kernel.disposed.connect(onGone);

  return () => {
    model.off("comm_live_update", onCommLive);
    if (kernel && kernel.statusChanged) kernel.statusChanged.disconnect(onKernelStatus);
    if (kernel && kernel.disposed) kernel.disposed.disconnect(onGone);
  };
}

// -- scrolling into view ------------------------------------------------------------
function scrollParent(node) {
  for (let e = node.parentElement; e; e = e.parentElement) {
    const y = getComputedStyle(e).overflowY;
    if ((y === "auto" || y === "scroll") && e.scrollHeight > e.clientHeight) return e;
  }
  return document.scrollingElement;
}

function showTop(root) {
  const scroller = scrollParent(root);
  const view = scroller === document.scrollingElement
    ? { top: 0, bottom: window.innerHeight } : scroller.getBoundingClientRect();
  const top = root.getBoundingClientRect().top;
  if (top >= view.top && top <= view.bottom - 80) return;
  scroller.scrollTop += top - view.top - 8;
}

// -- the panel ------------------------------------------------------------------------
function render({ model, el }) {
  const { TO_KERNEL, TO_BROWSER } = shared(model);
  const root = h("div", "jaxdbg-panel");
  root.tabIndex = -1;
  el.appendChild(root);

  const finished = () => !!(model.get("status") || {}).finished;
  let kernelGone = false;
  const commands = commandQueue(model);

  // Every command goes through here: the buttons, a frame row, a local's name, the input.
  function run(line, { typed = false, pretty = false } = {}) {
    if (finished() || kernelGone) return;
    if (!commands.send(line, typed, pretty)) {
      onKernelGone(); // the comm is closed: say so rather than drop the line
      return;
    }
    log.draw();
  }

  const bar = toolbarArea(model, run);
  const sizeBody = bodySizer(model, root);
  const frames = framesArea(model, run, sizeBody);
  const source = sourceArea(model, sizeBody);
  const body = h("div", "jaxdbg-body");
  body.append(frames.node, source.node);
  const arrayView = arrayViewArea(model);
  const locals = localsArea(model, run, arrayView.open, (text) => commandLine.fill(text));
  const watched = watchesArea(model, run);
  const breakpoints = breakpointsArea(model, run);
  const log = consoleLog(model, commands.pending, bar.busy, root);
  const commandLine = consoleInput(model, run);
  const ended = h("div", "jaxdbg-ended");
  const gone = h("div", "jaxdbg-gone");
  gone.setAttribute("role", "alert");
  gone.hidden = true;

  root.append(bar.header, gone, bar.toolbar, body, locals.node, arrayView.node, watched.node,
              breakpoints.node, log.node, commandLine.node, ended);
  panelKeys(root, bar.shortcutButtons, commandLine);

  function onKernelGone() {
    if (kernelGone || finished()) return;
    kernelGone = true;
    commands.pending.clear();
    gone.textContent = "The kernel of this stop has restarted or shut down: this panel can no longer " +
      "reach it, and what it shows is what the stop was. Run the cell again to debug it.";
    gone.hidden = false;
    root.classList.add("jaxdbg-kernel-gone");
    for (const b of root.querySelectorAll("button, input")) b.disabled = true;
    commandLine.hideCompletions();
    log.draw();
  }
  const unwatchKernel = watchKernel(model, onKernelGone);

  function drawStatus() {
    const s = model.get("status") || {};
    bar.draw(s, kernelGone);
    commandLine.input.disabled = !!s.finished || kernelGone;
    root.classList.toggle("jaxdbg-finished", !!s.finished);
    ended.textContent = s.finished ? s.ended || "The stop has ended." : "";
  }

  function onDone() {
    if (commands.onDone()) log.draw();
  }

  model.on("change:status", drawStatus);
  model.on("change:frames", frames.draw);
  model.on("change:selected", frames.drawSelected);
  model.on("change:source", source.draw);
  model.on("change:locals_page", locals.draw);
  const closeStaleView = () => arrayView.closeIfFrameChanged((model.get("locals_page") || {}).frame);
  model.on("change:locals_page", closeStaleView);
  model.on("change:log", log.draw);
  model.on("change:watches", watched.draw);
  model.on("change:breakpoints", breakpoints.draw);
  model.on("change:done", onDone);
  const onMessage = (msg, buffers) => {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === TO_BROWSER.PICTURE) locals.onPicture(msg, buffers || []);
    else if (msg.type === TO_BROWSER.VIEW) arrayView.onView(msg, buffers || []);
    if (msg.type === TO_BROWSER.LOCALS) locals.onLocals(msg);
    if (msg.type === TO_BROWSER.STATS) locals.onStats(msg);
    else if (msg.type === TO_BROWSER.CHILDREN) locals.onChildren(msg);
    else if (msg.type === TO_BROWSER.COMPLETIONS) commandLine.onCompletions(msg);
  };
  model.on("msg:custom", onMessage);

  drawStatus();
  frames.draw();
  source.draw();
  locals.draw();
  watched.draw();
  breakpoints.draw();
  log.draw();

  // Focus the console, and bring a panel whose top is out of view (Run All: the notebook
  // follows the cells queued after it) into view from its top: banner and source first.
  requestAnimationFrame(() => {
    if (finished()) return;
    commandLine.input.focus({ preventScroll: true });
    showTop(root);
  });

  // Clear Output sends the kernel nothing; tell it when this page shows no view of a
  // live panel any more, so the paused stop can show the panel again.
  model.jaxdbgViews = (model.jaxdbgViews || 0) + 1;
  try {
    model.send({ type: TO_KERNEL.DRAWN }); // see initialize
  } catch (e) {} // the stop has already ended (its comm is closed)

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
    locals.dispose();
    model.off("change:status", drawStatus);
    model.off("change:frames", frames.draw);
    model.off("change:selected", frames.drawSelected);
    model.off("change:source", source.draw);
    model.off("change:locals_page", locals.draw);
    model.off("change:locals_page", closeStaleView);
    model.off("change:log", log.draw);
    model.off("change:watches", watched.draw);
    model.off("change:breakpoints", breakpoints.draw);
    model.off("change:done", onDone);
    model.off("msg:custom", onMessage);
    unwatchKernel();
  };
}

// The kernel waits a few seconds after showing a stop for this message or render's
// DRAWN, then answers the stop at a typed prompt instead (a frontend without a widget
// manager draws nothing). `initialize` runs once per model wherever a widget manager
// holds it, before any view: a windowed notebook draws an off-screen cell only when it
// is scrolled into view.
function initialize({ model }) {
  const { TO_KERNEL } = shared(model);
  try {
    model.send({ type: TO_KERNEL.HELD });
  } catch (e) {} // the stop has already ended (its comm is closed)
}

export default { initialize, render };
