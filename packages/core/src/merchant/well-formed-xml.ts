/**
 * A small XML 1.0 well-formedness checker with namespace checks, for tests (not part of the public API):
 * one root element, properly nested and closed tags, unique and quoted attributes, only the predefined and
 * numeric entity references, no `<` in text or attributes, no `--` in comments, every prefix declared.
 * It returns the element tree, so tests can assert on what a document says. DOCTYPEs are refused.
 */

/** An element of a checked document. */
export interface XmlElement {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly children: readonly XmlElement[];
  /** The element's own character data (entities decoded), child elements' text excluded. */
  readonly text: string;
}

/** The outcome of a check. */
export type XmlCheck = { readonly ok: true; readonly root: XmlElement } | { readonly ok: false; readonly error: string };

const NAME = /^[A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?$/;
const PREDEFINED: Readonly<Record<string, string>> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

interface Building {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
  namespaces: Map<string, string>;
}

class XmlSyntaxError extends Error {}

function fail(message: string, at: number): never {
  throw new XmlSyntaxError(`${message} at offset ${at}`);
}

/** Decodes entity references in text or an attribute value, refusing unknown ones and a bare `&`. */
function decode(raw: string, at: number): string {
  if (raw.includes("<")) fail("'<' in character data or an attribute value", at);
  return raw.replace(/&([^;]*);|&/g, (m, ref: string | undefined) => {
    if (ref === undefined) fail("a bare '&'", at);
    if (ref in PREDEFINED) return PREDEFINED[ref] as string;
    const num = /^#(?:x([0-9A-Fa-f]+)|([0-9]+))$/.exec(ref);
    if (num === null) fail(`unknown entity &${ref};`, at);
    const code = num[1] !== undefined ? parseInt(num[1], 16) : Number(num[2]);
    if (code > 0x10ffff || NOT_XML_CHAR.test(String.fromCodePoint(code))) fail(`a character reference to a character XML forbids (${ref})`, at);
    return String.fromCodePoint(code);
  });
}

function prefixOf(name: string): string | null {
  const colon = name.indexOf(":");
  return colon < 0 ? null : name.slice(0, colon);
}

/** Checks `text` for well-formedness and namespace well-formedness. */
export function wellFormedXml(text: string): XmlCheck {
  try {
    return { ok: true, root: parse(text) };
  } catch (error) {
    if (error instanceof XmlSyntaxError) return { ok: false, error: error.message };
    throw error;
  }
}

function parse(text: string): XmlElement {
  if (NOT_XML_CHAR.test(text)) fail("a character XML forbids", text.search(NOT_XML_CHAR));
  let i = 0;
  if (text.startsWith("<?xml")) {
    const end = text.indexOf("?>");
    if (end < 0) fail("an unclosed XML declaration", 0);
    if (!/^<\?xml\s+version="1\.[0-9]"(\s+encoding="[A-Za-z][\w.-]*")?(\s+standalone="(yes|no)")?\s*\?>$/.test(text.slice(0, end + 2))) fail("a malformed XML declaration", 0);
    i = end + 2;
  }
  const stack: Building[] = [];
  let root: XmlElement | null = null;
  while (i < text.length) {
    const lt = text.indexOf("<", i);
    const chunk = text.slice(i, lt < 0 ? text.length : lt);
    if (chunk !== "") {
      const top = stack[stack.length - 1];
      if (top === undefined) {
        if (chunk.trim() !== "") fail("text outside the root element", i);
      } else {
        if (chunk.includes("]]>")) fail("']]>' in character data", i);
        top.text += decode(chunk, i);
      }
    }
    if (lt < 0) break;
    i = lt;
    if (text.startsWith("<!--", i)) {
      const end = text.indexOf("-->", i + 4);
      if (end < 0) fail("an unclosed comment", i);
      const body = text.slice(i + 4, end);
      if (body.includes("--") || body.endsWith("-")) fail("'--' inside a comment", i);
      i = end + 3;
    } else if (text.startsWith("<![CDATA[", i)) {
      const top = stack[stack.length - 1];
      if (top === undefined) fail("CDATA outside the root element", i);
      const end = text.indexOf("]]>", i);
      if (end < 0) fail("an unclosed CDATA section", i);
      top.text += text.slice(i + 9, end);
      i = end + 3;
    } else if (text.startsWith("<!", i)) {
      fail("a DOCTYPE or other declaration (not supported)", i);
    } else if (text.startsWith("<?", i)) {
      const end = text.indexOf("?>", i);
      if (end < 0) fail("an unclosed processing instruction", i);
      if (/^<\?xml[\s?]/i.test(text.slice(i, i + 6))) fail("an XML declaration not at the start", i);
      i = end + 2;
    } else if (text.startsWith("</", i)) {
      const end = text.indexOf(">", i);
      if (end < 0) fail("an unclosed end tag", i);
      const name = text.slice(i + 2, end).trim();
      const open = stack.pop();
      if (open === undefined || open.name !== name) fail(`</${name}> does not close ${open === undefined ? "anything" : `<${open.name}>`}`, i);
      const done: XmlElement = { name: open.name, attributes: open.attributes, children: open.children, text: open.text };
      const parent = stack[stack.length - 1];
      if (parent === undefined) root = done;
      else parent.children.push(done);
      i = end + 1;
    } else {
      const tag = startTag(text, i, stack, root !== null);
      // A self-closing root is the whole document's element content.
      if (tag.closedRoot !== null) root = tag.closedRoot;
      i = tag.next;
    }
  }
  if (stack.length > 0) fail(`<${(stack[stack.length - 1] as Building).name}> is never closed`, text.length);
  if (root === null) fail("no root element", text.length);
  return root;
}

/** Reads a start tag at `at`: pushes the element, or adds it whole when self-closing (returned when it is the root). */
function startTag(text: string, at: number, stack: Building[], rootDone: boolean): { next: number; closedRoot: XmlElement | null } {
  if (rootDone && stack.length === 0) fail("a second root element", at);
  const m = /^<([^\s/>]+)/.exec(text.slice(at));
  if (m === null) fail("a malformed tag", at);
  const name = m[1] as string;
  if (!NAME.test(name)) fail(`an invalid element name ${JSON.stringify(name)}`, at);
  let i = at + m[0].length;
  const attributes: Record<string, string> = {};
  for (;;) {
    const ws = /^\s*/.exec(text.slice(i))![0].length;
    i += ws;
    if (text.startsWith("/>", i) || text.startsWith(">", i)) break;
    if (ws === 0) fail("attributes not separated by white space", i);
    const a = /^([^\s=/>]+)\s*=\s*(["'])/.exec(text.slice(i));
    if (a === null) fail("a malformed attribute", i);
    const attr = a[1] as string;
    if (!NAME.test(attr) && attr !== "xmlns") fail(`an invalid attribute name ${JSON.stringify(attr)}`, i);
    if (attr in attributes) fail(`a repeated attribute ${attr}`, i);
    const quote = a[2] as string;
    const close = text.indexOf(quote, i + a[0].length);
    if (close < 0) fail("an unclosed attribute value", i);
    attributes[attr] = decode(text.slice(i + a[0].length, close), i);
    i = close + 1;
  }
  const parentNs = stack[stack.length - 1]?.namespaces ?? new Map([["xml", "http://www.w3.org/XML/1998/namespace"]]);
  const namespaces = new Map(parentNs);
  for (const [attr, value] of Object.entries(attributes)) {
    if (attr.startsWith("xmlns:")) {
      if (value === "") fail(`an empty namespace for ${attr}`, at);
      namespaces.set(attr.slice(6), value);
    }
  }
  for (const n of [name, ...Object.keys(attributes).filter((x) => x !== "xmlns" && !x.startsWith("xmlns:"))]) {
    const prefix = prefixOf(n);
    if (prefix !== null && !namespaces.has(prefix)) fail(`the undeclared prefix ${prefix} of ${n}`, at);
  }
  const selfClosing = text.startsWith("/>", i);
  if (selfClosing) {
    const done: XmlElement = { name, attributes, children: [], text: "" };
    const parent = stack[stack.length - 1];
    if (parent === undefined) return { next: i + 2, closedRoot: done };
    parent.children.push(done);
    return { next: i + 2, closedRoot: null };
  }
  stack.push({ name, attributes, children: [], text: "", namespaces });
  return { next: i + 1, closedRoot: null };
}
