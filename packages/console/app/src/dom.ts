/** A few DOM helpers: elements from a tag, attributes and children; text is always set as text, never as HTML. */

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | EventListener | null | undefined>;

/** `h("button", { class: "x", onclick: f }, "Save")`: on* keys become listeners, `false`/`null` attributes are left out. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") el.addEventListener(name.slice(2), value);
    else if (value === true) el.setAttribute(name, "");
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

/** Appends children, skipping empty ones. */
export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
}

/** Replaces an element's children. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

const SVG = "http://www.w3.org/2000/svg";

/** An SVG element with attributes. */
export function svg(tag: string, attrs: Record<string, string | number>, ...children: Node[]): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.appendChild(c);
  return el;
}

/** A date-time shown in the reader's locale (UTC ISO in the title). */
export function when(iso: string | null | undefined): Node {
  if (!iso) return document.createTextNode("—");
  const t = h("time", { datetime: iso, title: iso }, new Date(iso).toLocaleString());
  return t;
}

/**
 * A table with a header row, in a horizontally scrolling box. At 48rem (768 px) and below (console.css)
 * each row becomes a stacked block, every cell labelled by its column (`data-label`), so nothing needs
 * scrolling sideways on a phone. A column headed "" is the actions column: its header says "Actions" to
 * screen readers only.
 */
export function table(head: string[], rows: Child[][], caption?: string): HTMLElement {
  // The explicit roles are for browsers that drop a table's semantics once CSS changes its display
  // (Safari did, and the narrow layout sets display: block); where the browser keeps them they change nothing.
  return h(
    "div",
    { class: "scroll" },
    h(
      "table",
      { class: "stack", role: "table" },
      caption ? h("caption", { class: "sr-only" }, caption) : null,
      h("thead", { role: "rowgroup" }, h("tr", { role: "row" }, ...head.map((c) => h("th", { scope: "col", role: "columnheader" }, c === "" ? h("span", { class: "sr-only" }, "Actions") : c)))),
      h("tbody", { role: "rowgroup" }, ...rows.map((r) => h("tr", { role: "row" }, ...r.map((c, i) => h("td", { role: "cell", "data-label": head[i] || null }, c))))),
    ),
  );
}

/** An alert line (role=alert for errors so screen readers announce it). */
export function alert(kind: "error" | "warn" | "ok", text: string): HTMLElement {
  return h("div", { class: `alert ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}

/**
 * A button that asks before it acts: the first press shows "Yes, …" and "Cancel" in its place (no native
 * dialog, so it stays keyboard- and screen-reader-friendly); "Yes" runs `act`.
 */
export function confirmButton(label: string, question: string, act: () => Promise<void>): HTMLElement {
  const box = h("span", { class: "row" });
  const start = (): void => {
    const yes = h("button", { type: "button", class: "danger", onclick: () => void run() }, `Yes, ${label.toLowerCase()}`);
    const no = h("button", { type: "button", class: "secondary", onclick: reset }, "Cancel");
    replace(box, h("span", {}, question), yes, no);
    yes.focus();
    async function run(): Promise<void> {
      yes.setAttribute("disabled", "");
      await act();
    }
  };
  function reset(): void {
    replace(box, h("button", { type: "button", class: "secondary", onclick: start }, label));
  }
  reset();
  return box;
}

/** A panel that shows a secret once, with a copy button and the warning that it will not be shown again. */
export function secretPanel(title: string, value: string, onDone: () => void): HTMLElement {
  const status = h("span", { class: "muted", role: "status" });
  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(value);
      status.textContent = "Copied.";
    } catch {
      status.textContent = "Select the text and copy it.";
    }
  };
  return h(
    "section",
    { class: "secret", "aria-label": title },
    h("strong", {}, title),
    h("p", {}, "Copy it now: you will not see this again. It is not stored anywhere we can show it from."),
    h("code", { "data-secret": "" }, value),
    h("div", { class: "row" }, h("button", { type: "button", onclick: () => void copy() }, "Copy"), h("button", { type: "button", class: "secondary", onclick: onDone }, "I have saved it"), status),
  );
}
