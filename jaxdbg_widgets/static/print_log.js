// The live print log of one cell run: first and last rows with a count between,
// a filter over the rows this page received, and a Save action (a download).
const SHOWN = 20; // rows shown at each end

// Rows gathered from "chunk" updates, per log. Keyed by the log's id: the model
// object handed to initialize() and to render() need not be the same wrapper.
const received = new Map();

function gather(model) {
  const id = model.get("log_id");
  if (!received.has(id)) received.set(id, { rows: [] });
  return received.get(id);
}

function onChunk(model) {
  const store = gather(model);
  const chunk = model.get("chunk");
  if (!chunk || !Array.isArray(chunk.rows)) return;
  if (chunk.offset > store.rows.length) return; // rows sent before this page listened are missing
  if (chunk.offset + chunk.rows.length > store.rows.length) {
    const skip = Math.max(0, store.rows.length - chunk.offset);
    for (const row of chunk.rows.slice(skip)) store.rows.push(row);
  }
}

function initialize({ model }) {
  gather(model);
  onChunk(model);
  model.on("change:chunk", () => onChunk(model));
}

function cell(tag, text, cls) {
  const node = document.createElement(tag);
  node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

function rowNode(row) {
  const tr = document.createElement("tr");
  tr.appendChild(cell("td", row[0], "jaxdbg-pl-loc"));
  tr.appendChild(cell("td", row[1], "jaxdbg-pl-where"));
  tr.appendChild(cell("td", row[2], "jaxdbg-pl-text"));
  return tr;
}

function gapNode(count, noun) {
  const tr = document.createElement("tr");
  const td = cell("td", `… ${count.toLocaleString()} more ${noun} …`, "jaxdbg-pl-gap");
  td.colSpan = 3;
  tr.appendChild(td);
  return tr;
}

function asText(rows) {
  return rows.map((r) => `${r[0]}\t${r[1]}\t${r[2]}`).join("\n") + "\n";
}

function render({ model, el }) {
  el.classList.add("jaxdbg-print-log");
  const header = cell("div", "", "jaxdbg-pl-header");
  const title = cell("span", "", "jaxdbg-pl-title");
  const filter = document.createElement("input");
  filter.type = "search";
  filter.placeholder = "filter rows";
  filter.className = "jaxdbg-pl-filter";
  const save = cell("button", "Save", "jaxdbg-pl-save");
  save.title = "Download the rows as a text file";
  const note = cell("span", "", "jaxdbg-pl-note");
  header.append(title, filter, save, note);
  const table = document.createElement("table");
  table.className = "jaxdbg-pl-rows";
  const body = document.createElement("tbody");
  table.appendChild(body);
  el.append(header, table);

  function draw() {
    const total = model.get("total");
    const store = gather(model);
    const query = filter.value.trim().toLowerCase();
    title.textContent = `${model.get("title")} · ${total.toLocaleString()} row${total === 1 ? "" : "s"}`;
    body.replaceChildren();
    let first, last, hidden, noun;
    if (!query) {
      first = model.get("head");
      last = model.get("tail");
      hidden = Math.max(0, total - first.length - last.length);
      if (hidden === 0) last = last.slice(Math.max(0, first.length + last.length - total));
      noun = "rows";
      note.textContent = "";
    } else {
      const hits = store.rows.filter((r) => r.join(" ").toLowerCase().includes(query));
      first = hits.slice(0, SHOWN);
      last = hits.length > SHOWN ? hits.slice(Math.max(SHOWN, hits.length - SHOWN)) : [];
      hidden = hits.length - first.length - last.length;
      noun = "matches";
      note.textContent = `${hits.length.toLocaleString()} match${hits.length === 1 ? "" : "es"}` +
        (store.rows.length < total ? ` in ${store.rows.length.toLocaleString()} rows received here` : "");
    }
    for (const row of first) body.appendChild(rowNode(row));
    if (hidden > 0) body.appendChild(gapNode(hidden, noun));
    for (const row of last) body.appendChild(rowNode(row));
  }

  save.addEventListener("click", () => {
    const store = gather(model);
    const blob = new Blob([asText(store.rows)], { type: "text/plain" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = `${model.get("title").replace(/[^\w.-]+/g, "_")}.txt`;
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 1000);
  });
  filter.addEventListener("input", draw);
  model.on("change:total", draw);
  model.on("change:chunk", () => { if (filter.value) draw(); });
  draw();
  // The log's widget is closed when its cell ends: let its rows go with the view.
  return () => received.delete(model.get("log_id"));
}

export default { initialize, render };
