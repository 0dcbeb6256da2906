/**
 * The browser console: sign in (a one-time link or a session token), keys, usage and quota, webhooks and
 * their deliveries, and a quick start, all through the console API. Plain TypeScript and the DOM: the page
 * is small enough that a framework would be most of its weight.
 */
import { ApiError, call, client, whenSignedOut } from "./api.ts";
import { consoleSignIn, consoleSignOut, createKey, createWebhook, deleteWebhook, getConsoleAccount, getConsoleEnvironments, getUsageBreakdown, getUsageDaily, getUsageSummary, listDeliveries, listAudit, listInvoices, listKeys, listWebhooks, retryBilling, retryDelivery, revokeKey, rotateKey, testWebhooks, EVENT_TYPES } from "@benchdata/client";
import type { Account, AuditEntry, Breakdown, Delivery, Environments, Invoice, Key, TestResult, Usage, Webhook } from "./api.ts";
import { alert, confirmButton, h, replace, secretPanel, svg, table, when } from "./dom.ts";

const app = document.getElementById("app") as HTMLElement;
const who = document.getElementById("who") as HTMLElement;
let account: Account | null = null;
/** The raw keys created in this page (the last of each environment), kept in memory only, for the quick start's curl. */
const lastKeys: { live: string | null; test: string | null } = { live: null, test: null };

const TABS = [
  ["keys", "API keys"],
  ["usage", "Usage & billing"],
  ["webhooks", "Webhooks"],
  ["activity", "Activity"],
  ["start", "Quick start"],
] as const;
type Tab = (typeof TABS)[number][0];

function message(e: unknown): string {
  // The request id is what the operator needs to find the request in their logs.
  return e instanceof ApiError ? `${e.detail} (${e.code}${e.requestId === null ? "" : `, request ${e.requestId}`})` : e instanceof Error ? e.message : String(e);
}

// ---- sign-in -------------------------------------------------------------------------------------------

function signInView(notice?: string): void {
  account = null;
  replace(who);
  const token = h("input", { type: "password", id: "token", name: "token", autocomplete: "off", required: true, spellcheck: "false" });
  const err = h("div");
  const form = h(
    "form",
    {
      onsubmit: (ev: Event) => {
        ev.preventDefault();
        void exchange(token.value.trim(), err);
      },
    },
    h("label", { for: "token" }, "Session token or sign-in token", token),
    h("button", { type: "submit" }, "Sign in"),
  );
  replace(
    app,
    h("h1", {}, "Sign in"),
    notice ? alert("warn", notice) : null,
    err,
    h("p", { class: "muted" }, "Open the sign-in link your operator gave you, or paste the session token (bds_sess_…) you were given."),
    form,
  );
  document.title = "Sign in · benchdata console";
}

async function exchange(token: string, err: HTMLElement): Promise<void> {
  replace(err);
  try {
    await call(consoleSignIn(client, { token }), { signIn: true });
    await start();
  } catch (e) {
    replace(err, alert("error", message(e)));
  }
}

// ---- shell and routing -------------------------------------------------------------------------------

function currentTab(): Tab {
  const t = location.hash.replace(/^#/, "");
  return (TABS.find(([id]) => id === t)?.[0] ?? "keys") as Tab;
}

async function start(): Promise<void> {
  // A one-time sign-in link carries its token in the fragment (never sent to a server or a Referer).
  const m = /^#sign-in=([^&]+)$/.exec(location.hash);
  if (m) {
    history.replaceState(null, "", location.pathname);
    const err = h("div");
    replace(app, h("p", { class: "muted" }, "Signing in…"), err);
    try {
      await call(consoleSignIn(client, { token: decodeURIComponent(m[1]!) }), { signIn: true });
    } catch (e) {
      signInView(e instanceof ApiError && e.status === 401 ? "This sign-in link was already used, has expired or is not valid. Ask your operator for a new one." : message(e));
      return;
    }
  }
  try {
    account = await call(getConsoleAccount(client));
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 401)) signInView(message(e));
    return;
  }
  replace(
    who,
    h("span", {}, `${account.name} · ${account.tier}`),
    h("button", { type: "button", class: "secondary", onclick: () => void signOut() }, "Sign out"),
  );
  await route();
}

async function signOut(): Promise<void> {
  try {
    await call(consoleSignOut(client));
  } finally {
    signInView("You are signed out.");
  }
}

async function route(): Promise<void> {
  if (account === null) return;
  const tab = currentTab();
  const nav = h("nav", { class: "tabs", "aria-label": "Console sections" }, ...TABS.map(([id, label]) => h("a", { href: `#${id}`, "aria-current": id === tab ? "page" : null }, label)));
  const body = h("div");
  replace(app, nav, body);
  document.title = `${TABS.find(([id]) => id === tab)![1]} · benchdata console`;
  try {
    if (tab === "keys") await keysView(body);
    else if (tab === "usage") await usageView(body);
    else if (tab === "webhooks") await webhooksView(body);
    else if (tab === "activity") await activityView(body);
    else await quickStart(body);
  } catch (e) {
    if (account !== null) replace(body, alert("error", message(e)));
  }
}

// ---- keys --------------------------------------------------------------------------------------------

async function keysView(body: HTMLElement): Promise<void> {
  const top = h("div");
  const list = h("div");
  const refresh = async (): Promise<void> => {
    const keys: Key[] = (await call(listKeys(client))).data;
    replace(
      list,
      keys.length === 0
        ? h("p", { class: "muted" }, "No keys yet.")
        : table(
            ["Name", "Env", "Scopes", "Prefix", "Created", "Last used", "State", ""],
            keys.map((k) => [
              k.name,
              h("span", { class: `pill ${k.environment === "live" ? "ok" : ""}` }, k.environment),
              k.scopes.join(", "),
              h("code", {}, k.prefix),
              when(k.created_at),
              k.last_used_at === null ? h("span", { class: "muted" }, "never") : when(k.last_used_at),
              !k.is_active ? h("span", { class: "pill bad" }, k.revoked_at ? "revoked" : "retired") : k.rotation_due ? h("span", { class: "pill warn" }, "rotation due") : h("span", { class: "pill ok" }, "active"),
              k.is_active
                ? h(
                    "div",
                    { class: "row" },
                    confirmButton("Rotate", `Rotate ${k.name}? The old key stops working.`, async () => {
                      const r = await call(rotateKey(client, k.key_id));
                      lastKeys[r.environment] = r.raw_key;
                      replace(top, secretPanel(`New key for ${r.name}`, r.raw_key, () => replace(top)));
                      await refresh();
                    }),
                    confirmButton("Revoke", `Revoke ${k.name}? This cannot be undone.`, async () => {
                      await call(revokeKey(client, k.key_id));
                      replace(top, alert("ok", `${k.name} is revoked.`));
                      await refresh();
                    }),
                  )
                : "",
            ]),
            "API keys",
          ),
    );
  };

  const name = h("input", { type: "text", id: "key-name", required: true, maxlength: 100 });
  const env = h("select", { id: "key-env" }, h("option", { value: "test" }, "test"), h("option", { value: "live" }, "live"));
  const scopes = account!.permitted_scopes.map((s) => h("input", { type: "checkbox", name: "scope", value: s, checked: s === "benchmarks:read" }));
  const err = h("div");
  const form = h(
    "form",
    {
      onsubmit: (ev: Event) => {
        ev.preventDefault();
        void (async () => {
          replace(err);
          const chosen = scopes.filter((c) => c.checked).map((c) => c.value);
          try {
            const k = await call(createKey(client, { name: name.value.trim(), environment: env.value as "live" | "test", scopes: chosen as Key["scopes"] }));
            lastKeys[k.environment] = k.raw_key;
            name.value = "";
            replace(top, secretPanel(`Your new ${k.environment} key "${k.name}"`, k.raw_key, () => replace(top)));
            await refresh();
          } catch (e) {
            replace(err, alert("error", message(e)));
          }
        })();
      },
    },
    h("label", { for: "key-name" }, "Name", name),
    h("label", { for: "key-env" }, "Environment", env),
    h("fieldset", {}, h("legend", {}, "Scopes (those your tier permits)"), ...scopes.map((c) => h("label", {}, c, c.value))),
    h("button", { type: "submit" }, "Create key"),
  );
  replace(body, h("h1", {}, "API keys"), top, list, h("h2", {}, "Create a key"), err, form);
  await refresh();
}

// ---- usage and billing ----------------------------------------------------------------------------------

function money(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency: currency.toUpperCase() }).format(amount / 100);
  } catch {
    return `${(amount / 100).toFixed(2)} ${currency}`;
  }
}

function chart(days: { date: string; calls: number }[]): Element {
  const total = days.reduce((n, d) => n + d.calls, 0);
  // An empty chart reads as a broken one: say it.
  if (total === 0) return h("p", { class: "muted", id: "daily-empty" }, `No calls in the last ${days.length} days. Requests made with this account's keys appear here, day by day.`);
  const max = Math.max(1, ...days.map((d) => d.calls));
  const w = 600;
  const hgt = 150;
  const bw = w / days.length;
  const bars = days.map((d, i) => {
    const bh = (d.calls / max) * (hgt - 10);
    const r = svg("rect", { x: (i * bw + 1).toFixed(1), y: (hgt - bh).toFixed(1), width: Math.max(1, bw - 2).toFixed(1), height: bh.toFixed(1) });
    r.appendChild(svg("title", {}, document.createTextNode(`${d.date}: ${d.calls} calls`)));
    return r;
  });
  return svg("svg", { class: "chart", viewBox: `0 0 ${w} ${hgt}`, preserveAspectRatio: "none", role: "img", "aria-label": `Daily calls over the last ${days.length} days: ${total} in all, at most ${max} in a day.` }, ...bars);
}

const OUTCOMES = ["2xx", "429", "401/403", "402", "404", "422", "4xx", "5xx"] as const;
type Group = Breakdown["data"][number];
/** The period the per-key table and the outcome chart show; kept while the page is open. */
let period: "24h" | "30d" = "24h";

/** Every group of a breakdown query, following the cursor to the last page. */
async function allGroups(query: Parameters<typeof getUsageBreakdown>[1]): Promise<{ from: string; to: string; data: Group[] }> {
  const first = await call(getUsageBreakdown(client, query));
  const data = [...first.data];
  for (let cursor = first.next_cursor; cursor !== null; ) {
    const page = await call(getUsageBreakdown(client, { ...query, cursor }));
    data.push(...page.data);
    cursor = page.next_cursor;
  }
  return { from: first.from, to: first.to, data };
}

/** Calls by outcome per hour or day, stacked bars (every bucket of the range, empty ones too) and a legend. */
function outcomeChart(from: string, to: string, step: number, groups: Group[], label: string): Element {
  const starts: number[] = [];
  for (let t = Date.parse(from); t < Date.parse(to); t += step) starts.push(t);
  const per = new Map<number, Record<string, number>>(starts.map((t) => [t, {}]));
  const totals: Record<string, number> = {};
  for (const g of groups) {
    const b = per.get(Date.parse(g.start)) ?? {};
    for (const o of OUTCOMES) {
      b[o] = (b[o] ?? 0) + g.outcomes[o];
      totals[o] = (totals[o] ?? 0) + g.outcomes[o];
    }
  }
  const shown = OUTCOMES.filter((o) => (totals[o] ?? 0) > 0);
  const sum = shown.reduce((n, o) => n + totals[o]!, 0);
  if (sum === 0) return h("p", { class: "muted", id: "outcomes-empty" }, `No calls ${label}.`);
  const max = Math.max(1, ...starts.map((t) => shown.reduce((n, o) => n + (per.get(t)![o] ?? 0), 0)));
  const w = 600;
  const hgt = 150;
  const bw = w / starts.length;
  const bars = starts.flatMap((t, i) => {
    let y = hgt;
    const b = per.get(t)!;
    return shown.flatMap((o) => {
      const n = b[o] ?? 0;
      if (n === 0) return [];
      const bh = (n / max) * (hgt - 10);
      y -= bh;
      const r = svg("rect", { class: `o${OUTCOMES.indexOf(o)}`, "data-outcome": o, x: (i * bw + 1).toFixed(1), y: y.toFixed(1), width: Math.max(1, bw - 2).toFixed(1), height: bh.toFixed(1) });
      r.appendChild(svg("title", {}, document.createTextNode(`${new Date(t).toISOString().slice(0, step === 3_600_000 ? 13 : 10).replace("T", " ")}${step === 3_600_000 ? ":00 UTC" : ""}: ${n} ${o}`)));
      return [r];
    });
  });
  const summary = shown.map((o) => `${o} ${totals[o]}`).join(", ");
  return h(
    "div",
    {},
    svg("svg", { class: "chart outcomes", viewBox: `0 0 ${w} ${hgt}`, preserveAspectRatio: "none", role: "img", "aria-label": `Calls by outcome ${label}: ${summary}.` }, ...bars),
    h("ul", { class: "legend", "aria-label": "Outcomes" }, ...shown.map((o) => h("li", { "data-outcome": o }, svg("svg", { class: "swatch", viewBox: "0 0 10 10", "aria-hidden": "true" }, svg("rect", { class: `o${OUTCOMES.indexOf(o)}`, width: 10, height: 10 })), ` ${o}: ${totals[o]!.toLocaleString()}`))),
  );
}

/**
 * Calls, errors, 429s and p95 per key, and calls by outcome over time, for the last 24 hours (by hour) or 30
 * days (by day). The API gives a p95 per bucket, not the histogram: the period's p95 shown is the largest
 * bucket p95, an upper bound (if at most 5% of every bucket's calls are slower than X, at most 5% of all are).
 */
async function perKey(section: HTMLElement, keys: Map<string, string>): Promise<void> {
  const day = period === "30d";
  const label = day ? "in the last 30 days" : "in the last 24 hours";
  const b = await allGroups({ granularity: day ? "day" : "hour", group_by: "key" });
  const rows = new Map<string, { calls: number; errors: number; limited: number; p95: number | null }>();
  for (const g of b.data) {
    const r = rows.get(g.key_id!) ?? { calls: 0, errors: 0, limited: 0, p95: null };
    r.calls += g.calls;
    r.errors += g.errors;
    r.limited += g.rate_limited;
    if (g.latency_ms.p95 !== null) r.p95 = Math.max(r.p95 ?? 0, g.latency_ms.p95);
    rows.set(g.key_id!, r);
  }
  const toggle = h(
    "div",
    { class: "row period", role: "group", "aria-label": "Period" },
    ...(["24h", "30d"] as const).map((p) =>
      h("button", { type: "button", class: p === period ? "" : "secondary", "aria-pressed": p === period ? "true" : "false", onclick: () => { period = p; void perKey(section, keys); } }, p === "24h" ? "Last 24 hours" : "Last 30 days"),
    ),
  );
  const sorted = [...rows].sort((x, y) => y[1].calls - x[1].calls);
  replace(
    section,
    h("h2", { id: "per-key-h" }, "Calls per key"),
    toggle,
    sorted.length === 0
      ? h("p", { class: "muted" }, `No calls with this account's keys ${label}.`)
      : table(
          ["Key", "Calls", "Errors", "429s", "p95"],
          sorted.map(([id, r]) => [keys.get(id) ?? id, r.calls.toLocaleString(), r.errors.toLocaleString(), r.limited.toLocaleString(), r.p95 === null ? "—" : `≤ ${Math.ceil(r.p95 * 10) / 10} ms`]),
          `Calls per key ${label}`,
        ),
    h("p", { class: "muted" }, `Errors: every answer but 2xx and 429. p95: the slowest ${day ? "day's" : "hour's"} p95 in the period, an upper bound. Counts are written every few seconds.`),
    h("h3", {}, `Calls by outcome, ${day ? "per day" : "per hour (UTC)"}`),
    outcomeChart(b.from, b.to, day ? 86_400_000 : 3_600_000, b.data, label),
  );
}

async function usageView(body: HTMLElement): Promise<void> {
  const [u, daily, invoices] = await Promise.all([
    call(getUsageSummary(client)),
    call(getUsageDaily(client, { days: 30 })),
    call(listInvoices(client)),
  ]);
  const keyNames = new Map((await call(listKeys(client))).data.map((k) => [k.key_id, k.name] as const));
  const keySection = h("section", { class: "card", id: "per-key", "aria-labelledby": "per-key-h" });
  const share = u.monthly_limit === 0 ? 1 : u.month / u.monthly_limit;
  const state = u.quota_exhausted ? "bad" : share >= 0.8 ? "warn" : "";
  const pct = Math.min(100, Math.round(share * 100));
  const err = h("div");
  const failed = invoices.data.find((i) => i.status === "failed");
  const retry = h("button", {
    type: "button",
    onclick: () =>
      void (async () => {
        replace(err);
        try {
          await call(retryBilling(client));
          replace(err, alert("ok", "A new charge attempt has started. Refresh in a moment to see its outcome."));
        } catch (e) {
          replace(err, alert("error", message(e)));
        }
      })(),
  }, "Retry the charge");
  replace(
    body,
    h("h1", {}, "Usage & billing"),
    err,
    h(
      "section",
      { class: "card", "aria-labelledby": "quota-h" },
      h("h2", { id: "quota-h" }, "This billing period"),
      h("p", {}, `${u.month.toLocaleString()} of ${u.monthly_limit.toLocaleString()} calls used (live keys) · ${u.token_balance.toLocaleString()} left · period ends `, when(u.period_end)),
      h("div", { class: `bar ${state}`, role: "progressbar", "aria-label": "Calls used this period", "aria-valuemin": 0, "aria-valuemax": u.monthly_limit, "aria-valuenow": u.month }, h("span")),
      u.quota_exhausted
        ? h("div", {}, alert("error", "The quota is exhausted: live requests answer 402 until a charge for the next block succeeds."), failed ? h("div", { class: "row" }, h("span", {}, `The last charge failed: ${failed.failure_reason ?? "declined"}.`), retry) : null)
        : share >= 0.8
          ? alert("warn", `You have used ${pct}% of this period's calls.`)
          : null,
      h("p", { class: "muted" }, `Today: live keys ${u.environments.live.today.toLocaleString()} of ${u.environments.live.daily_limit.toLocaleString()} requests, test keys ${u.environments.test.today.toLocaleString()} of ${u.environments.test.daily_limit.toLocaleString()} · ${u.active_keys} active keys`),
    ),
    h("section", { class: "card", "aria-labelledby": "daily-h" }, h("h2", { id: "daily-h" }, "Daily calls, last 30 days"), chart(daily.data)),
    keySection,
    h("h2", {}, "Invoices"),
    invoices.data.length === 0
      ? h("p", { class: "muted" }, "No invoices yet.")
      : table(
          ["Created", "Amount", "Block", "Attempt", "Status", "Reason"],
          invoices.data.map((i) => [when(i.created_at), money(i.amount, i.currency), i.block, i.attempt, h("span", { class: `pill ${i.status === "paid" ? "ok" : i.status === "failed" ? "bad" : "warn"}` }, i.status), i.failure_reason ?? ""]),
          "Invoices",
        ),
  );
  // Set through the CSSOM: the Content-Security-Policy allows no style attribute in markup.
  const fill = body.querySelector(".bar > span") as HTMLElement | null;
  if (fill) fill.style.width = `${pct}%`;
  await perKey(keySection, keyNames);
}

// ---- webhooks ------------------------------------------------------------------------------------------

async function webhooksView(body: HTMLElement): Promise<void> {
  const top = h("div");
  const list = h("div");
  const detail = h("div");
  const refresh = async (): Promise<void> => {
    const hooks: Webhook[] = (await call(listWebhooks(client))).data;
    replace(
      list,
      hooks.length === 0
        ? h("p", { class: "muted" }, "No webhooks yet.")
        : table(
            ["URL", "Events", "Created", "State", ""],
            hooks.map((w) => [
              h("code", {}, w.url),
              w.events.join(", "),
              when(w.created_at),
              h("span", { class: `pill ${w.status === "disabled" ? "bad" : "ok"}` }, w.status ?? "active", w.disabled_reason ? ` (${w.disabled_reason})` : ""),
              h(
                "div",
                { class: "row" },
                h("button", { type: "button", class: "secondary", onclick: () => void deliveries(w) }, "Deliveries"),
                confirmButton("Delete", "Delete this webhook? Its pending deliveries stop.", async () => {
                  await call(deleteWebhook(client, w.webhook_id));
                  replace(detail);
                  replace(top, alert("ok", "Webhook deleted."));
                  await refresh();
                }),
              ),
            ]),
            "Webhooks",
          ),
    );
  };

  async function deliveries(w: Webhook): Promise<void> {
    const rows: Delivery[] = (await call(listDeliveries(client, w.webhook_id))).data;
    const err = h("div");
    replace(
      detail,
      h("h2", {}, "Deliveries to ", h("code", {}, w.url)),
      err,
      rows.length === 0
        ? h("p", { class: "muted" }, "No deliveries yet.")
        : table(
            ["Event", "Created", "Status", "Attempts", ""],
            rows.map((d) => [
              h("span", {}, d.event_type, h("br"), h("code", { class: "muted" }, d.event_id)),
              when(d.created_at),
              h("span", { class: `pill ${d.status === "succeeded" ? "ok" : d.status === "dead" ? "bad" : "warn"}` }, d.status),
              d.attempts.length === 0
                ? h("span", { class: "muted" }, d.next_attempt_at ? "next attempt " : "none", d.next_attempt_at ? when(d.next_attempt_at) : "")
                : h("ol", {}, ...d.attempts.map((a) => h("li", {}, when(a.at), ` · ${a.status_code ?? "no answer"} · ${Math.round(a.latency_ms)} ms`, a.error ? ` · ${a.error}` : ""))),
              d.status === "dead"
                ? h("button", {
                    type: "button",
                    onclick: () =>
                      void (async () => {
                        try {
                          await call(retryDelivery(client, w.webhook_id, d.delivery_id));
                          await deliveries(w);
                        } catch (e) {
                          replace(err, alert("error", message(e)));
                        }
                      })(),
                  }, "Retry")
                : "",
            ]),
            "Deliveries",
          ),
    );
  }

  const url = h("input", { type: "url", id: "hook-url", required: true, placeholder: "https://example.com/benchdata" });
  const events = EVENT_TYPES.map((t) => h("input", { type: "checkbox", name: "event", value: t, checked: true }));
  const err = h("div");
  const form = h(
    "form",
    {
      onsubmit: (ev: Event) => {
        ev.preventDefault();
        void (async () => {
          replace(err);
          try {
            const w = await call(createWebhook(client, { url: url.value.trim(), events: events.filter((c) => c.checked).map((c) => c.value) as Webhook["events"] }));
            url.value = "";
            replace(top, secretPanel("The webhook's signing secret", w.signing_secret, () => replace(top)));
            await refresh();
          } catch (e) {
            replace(err, alert("error", message(e)));
          }
        })();
      },
    },
    h("label", { for: "hook-url" }, "URL (https, a public address)", url),
    h("fieldset", {}, h("legend", {}, "Events"), ...events.map((c) => h("label", {}, c, c.value))),
    h("button", { type: "submit" }, "Create webhook"),
  );
  const testOut = h("div", { "aria-live": "polite" });
  const test = h("button", {
    type: "button",
    class: "secondary",
    onclick: () =>
      void (async () => {
        replace(testOut, h("p", { class: "muted" }, "Sending…"));
        try {
          const r: TestResult = await call(testWebhooks(client));
          replace(
            testOut,
            r.results.length === 0
              ? alert("warn", "There is no webhook to send to.")
              : table(
                  ["Webhook", "Result", "Status", "Time"],
                  r.results.map((x) => [h("code", {}, x.url), h("span", { class: `pill ${x.ok ? "ok" : "bad"}` }, x.ok ? "delivered" : (x.error ?? "failed")), x.response_status ?? "—", `${Math.round(x.duration_ms)} ms`]),
                  "Test event results",
                ),
          );
        } catch (e) {
          replace(testOut, alert("error", message(e)));
        }
      })(),
  }, "Send a test event");
  replace(body, h("h1", {}, "Webhooks"), top, list, h("div", { class: "row" }, test), testOut, detail, h("h2", {}, "Create a webhook"), err, form);
  await refresh();
}

// ---- activity ------------------------------------------------------------------------------------------

/** A changed field's value in a line: `{from, to}` as "from → to", lists joined, other values as JSON. */
function fieldValue(x: unknown): string {
  if (Array.isArray(x)) return x.map(fieldValue).join(", ") || "none";
  if (x !== null && typeof x === "object") {
    const o = x as Record<string, unknown>;
    if ("from" in o && "to" in o && Object.keys(o).length === 2) return `${fieldValue(o.from)} → ${fieldValue(o.to)}`;
    return JSON.stringify(x);
  }
  return typeof x === "string" ? x : JSON.stringify(x);
}

/** The changed fields of an entry, one "field: value" line each (the account's own names and URLs included). */
function changesOf(e: AuditEntry): Node | string {
  const fields = Object.entries({ ...e.changes, ...(e.personal ?? {}) });
  if (fields.length === 0) return h("span", { class: "muted" }, "—");
  return h("ul", { class: "fields" }, ...fields.map(([k, x]) => h("li", {}, h("span", { class: "muted" }, `${k}: `), fieldValue(x))));
}

async function activityView(body: HTMLElement): Promise<void> {
  // Newest first, a page at a time: "Load more" asks for the page after the last one shown (its cursor).
  const entries: AuditEntry[] = [];
  const list = h("div");
  const err = h("div");
  const more = async (cursor?: string): Promise<void> => {
    const page = await call(listAudit(client, cursor === undefined ? { limit: 50 } : { limit: 50, cursor }));
    entries.push(...page.data);
    const next = page.next_cursor;
    replace(
      list,
      entries.length === 0
        ? h("p", { class: "muted", id: "activity-empty" }, "No activity yet. Creating, rotating or revoking keys, changing webhooks and signing in appear here, newest first.")
        : table(
            ["When", "Who", "Action", "Target", "Changes", "Request"],
            entries.map((e) => [when(e.at), h("code", {}, e.actor), e.action, e.target_id === null ? "—" : h("code", {}, e.target_id), changesOf(e), e.request_id === null ? "—" : h("code", {}, e.request_id)]),
            "Activity",
          ),
      next === null
        ? null
        : h("div", { class: "row" }, h("button", {
            type: "button",
            class: "secondary",
            onclick: () =>
              void (async () => {
                replace(err);
                try {
                  await more(next);
                } catch (e) {
                  replace(err, alert("error", message(e)));
                }
              })(),
          }, "Load more")),
    );
  };
  replace(body, h("h1", {}, "Activity"), h("p", { class: "muted" }, "What was changed in this account, by whom (a console session, or the operator) and when."), err, list);
  await more();
}

// ---- quick start ----------------------------------------------------------------------------------------

/** The curl of the quick start for one environment's access, with `key` in it. */
function curlFor(where: NonNullable<Environments["test"]>, key: string): string {
  const host = where.host_header === null ? "" : ` -H 'Host: ${where.host_header}'`;
  return `curl -s -H 'Authorization: Bearer ${key}'${host} '${where.base_url}/data/v1/benchmarks/percentile?metric=gross_margin&value=0.7&category=saas'`;
}

async function quickStart(body: HTMLElement): Promise<void> {
  // Where each environment's keys work depends on the deployment's target and the address the page was reached
  // at: the server says (a test key sent to the live host would answer 403 auth.environment_mismatch).
  const envs = await call(getConsoleEnvironments(client));
  const env: "test" | "live" = envs.test !== null ? "test" : "live";
  const where = (envs[env] ?? envs.live)!;
  const placeholder = env === "test" ? "YOUR_TEST_KEY" : "YOUR_LIVE_KEY";
  const key = lastKeys[env];
  const curl = curlFor(where, key ?? placeholder);
  const status = h("span", { class: "muted", role: "status" });
  const intro =
    key !== null
      ? `Your new ${env} key is filled in (it is kept only in this page):`
      : `Create a ${env} key under API keys, then run (with your key in place of ${placeholder}):`;
  const notes: (Node | string | null)[] = [];
  if (envs.target === "host" && envs.live !== null && envs.test !== null) {
    notes.push(h("p", {}, "Test keys work at ", h("code", {}, envs.test.base_url), envs.test.host_header === null ? "" : ` (with the header Host: ${envs.test.host_header})`, ", the sandbox; live keys at ", h("code", {}, envs.live.base_url), ". Using a key on the other one answers 403."));
  } else if (env === "live") {
    notes.push(h("p", {}, "This server accepts live keys only. Live keys read your operator's data and count toward your quota; use them from your server, never in browser code."));
  } else if (envs.live === null) {
    notes.push(h("p", {}, "This server accepts test keys only."));
  }
  replace(
    body,
    h("h1", {}, "Quick start"),
    h("p", {}, intro),
    h("pre", {}, h("code", { id: "curl" }, curl)),
    h("div", { class: "row" }, h("button", { type: "button", onclick: () => void navigator.clipboard.writeText(curl).then(() => (status.textContent = "Copied."), () => (status.textContent = "Select the text and copy it.")) }, "Copy"), status),
    ...notes,
    h("p", {}, env === "test" ? "Test keys answer from synthetic data and never count toward your quota. " : "", "Every endpoint is described in ", h("a", { href: "/openapi.json" }, "the OpenAPI document"), "."),
  );
}

whenSignedOut((m) => signInView(m));
window.addEventListener("hashchange", () => {
  if (/^#sign-in=/.test(location.hash)) void start();
  else void route();
});
void start();
