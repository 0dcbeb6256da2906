// A minimal stand-in for vitest's test API under Deno, so core's own *.test.ts files run unchanged on the
// real Deno runtime: describe/it/hooks map onto Deno.test, and `expect` is Jest's (the npm "expect"
// package). Only the parts core's tests use are here.
import { expect as jestExpect } from "expect";

declare const Deno: { test(name: string, fn: () => Promise<void>): void };

type Hook = () => unknown;
interface Suite {
  name: string;
  parent: Suite | null;
  beforeAll: Hook[];
  afterAll: Hook[];
  beforeEach: Hook[];
  afterEach: Hook[];
  pending: number;
  started: boolean;
}

const root: Suite = { name: "", parent: null, beforeAll: [], afterAll: [], beforeEach: [], afterEach: [], pending: 0, started: false };
let current = root;

function chain(s: Suite): Suite[] {
  const out: Suite[] = [];
  for (let x: Suite | null = s; x; x = x.parent) out.unshift(x);
  return out;
}

export function describe(name: string, body: () => void): void {
  const suite: Suite = { name, parent: current, beforeAll: [], afterAll: [], beforeEach: [], afterEach: [], pending: 0, started: false };
  const prev = current;
  current = suite;
  try {
    body();
  } finally {
    current = prev;
  }
}

function register(name: string, fn: () => unknown, skip = false): void {
  const suites = chain(current);
  for (const s of suites) s.pending++;
  const full = [...suites.map((s) => s.name).filter(Boolean), name].join(" > ");
  Deno.test(full, async () => {
    try {
      for (const s of suites) {
        if (!s.started) {
          s.started = true;
          for (const h of s.beforeAll) await h();
        }
      }
      if (!skip) {
        for (const s of suites) for (const h of s.beforeEach) await h();
        try {
          await fn();
        } finally {
          for (const s of [...suites].reverse()) for (const h of s.afterEach) await h();
        }
      }
    } finally {
      for (const s of [...suites].reverse()) {
        s.pending--;
        if (s.pending === 0) for (const h of s.afterAll) await h();
      }
    }
  });
}

function format(template: string, args: readonly unknown[]): string {
  let i = 0;
  return template.replace(/%[sdijo%]/g, (m) => (m === "%%" ? "%" : i < args.length ? (m === "%j" || m === "%o" ? JSON.stringify(args[i++]) : String(args[i++])) : m));
}

type TestFn = ((name: string, fn: () => unknown, timeout?: number) => void) & {
  skip: (name: string, fn: () => unknown) => void;
  each: (table: readonly unknown[]) => (name: string, fn: (...args: any[]) => unknown) => void;
};
export const it: TestFn = Object.assign((name: string, fn: () => unknown) => register(name, fn), {
  skip: (name: string, fn: () => unknown) => register(`${name} (skipped)`, fn, true),
  each: (table: readonly unknown[]) => (name: string, fn: (...args: any[]) => unknown) => {
    for (const row of table) {
      const args = Array.isArray(row) ? row : [row];
      register(format(name, args), () => fn(...args));
    }
  },
});
export const test: TestFn = it;
export function beforeAll(fn: Hook): void {
  current.beforeAll.push(fn);
}
export function afterAll(fn: Hook): void {
  current.afterAll.push(fn);
}
export function beforeEach(fn: Hook): void {
  current.beforeEach.push(fn);
}
export function afterEach(fn: Hook): void {
  current.afterEach.push(fn);
}
// vitest's expect takes an optional message as its second argument; Jest's does not.
function withMessage<T extends object>(target: T, message: string): T {
  return new Proxy(target, {
    get(t, prop, recv) {
      const v = Reflect.get(t, prop, recv);
      if (typeof v === "function") {
        return (...args: unknown[]) => {
          try {
            return (v as (...a: unknown[]) => unknown).apply(t, args);
          } catch (e) {
            if (e instanceof Error) e.message = `${message}\n${e.message}`;
            throw e;
          }
        };
      }
      return v !== null && typeof v === "object" ? withMessage(v as object, message) : v;
    },
  });
}

export const expect = Object.assign((value: unknown, message?: string) => {
  const m = jestExpect(value);
  return message ? withMessage(m, message) : m;
}, jestExpect) as unknown as typeof jestExpect;
