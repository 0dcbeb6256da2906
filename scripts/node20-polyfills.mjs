// vitest 5 reports failures with Map.groupBy / Object.groupBy, which Node 20 lacks (added in Node 21).
// Without this, a failing test crashes the reporter instead of printing the failure.
if (typeof Map.groupBy !== "function") {
  Map.groupBy = function groupBy(items, key) {
    const out = new Map();
    let i = 0;
    for (const item of items) {
      const k = key(item, i++);
      const list = out.get(k);
      if (list) list.push(item);
      else out.set(k, [item]);
    }
    return out;
  };
}
if (typeof Object.groupBy !== "function") {
  Object.groupBy = function groupBy(items, key) {
    const out = Object.create(null);
    let i = 0;
    for (const item of items) {
      const k = key(item, i++);
      (out[k] ??= []).push(item);
    }
    return out;
  };
}
