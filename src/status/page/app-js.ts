/**
 * The status page's script (served as /assets/app.js). It polls /status and builds every
 * element with createElement and textContent: on-chain text (summaries, errors) is data and
 * never passes through an HTML parser; links are only the explorer links /status builds
 * (checked again here to be http(s) under the configured explorer). Plain ES2020 without a
 * build step; kept free of backquotes and dollar-brace so that it fits this raw template.
 */
export const APP_JS = String.raw`(function () {
  "use strict";

  var POLL_MS = 1500;
  var TOKEN_KEY = "kaiawatch.status.token";
  var SVG = "http://www.w3.org/2000/svg";
  // Control, bidi-override and zero-width characters are shown as their code point, never obeyed.
  var HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

  var timer = null;
  var seenAlerts = null;
  var pendingAction = null;
  var last = null;

  function $(id) { return document.getElementById(id); }

  function clean(value, max) {
    var text = value === null || value === undefined ? "" : String(value);
    text = text.replace(/[\t\n\r]+/g, " ").replace(HIDDEN, function (c) {
      return "[U+" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0") + "]";
    });
    var limit = max || 400;
    return text.length > limit ? text.slice(0, limit) + "…" : text;
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = clean(text);
    return node;
  }

  function td(text, className) { return el("td", className, text === null || text === undefined ? "–" : text); }

  function fill(parent, nodes) { parent.replaceChildren.apply(parent, nodes); }

  function num(n) { return typeof n === "number" && isFinite(n) ? n.toLocaleString("en-US") : "–"; }

  function badge(text, kind) { return el("span", "badge" + (kind ? " " + kind : ""), text); }

  /** Only links /status built under the configured explorer, and only http(s). */
  function link(url, label) {
    var base = last && typeof last.explorer_url === "string" ? last.explorer_url : null;
    if (typeof url !== "string" || base === null || !/^https?:\/\//i.test(base) || url.indexOf(base + "/") !== 0 || /[\s"'<>]/.test(url)) {
      return el("span", "mono", label);
    }
    var a = el("a", "mono", label);
    a.href = url;
    a.target = "_blank";
    a.rel = "noopener noreferrer nofollow";
    return a;
  }

  function secondsBetween(fromIso, toIso) {
    var from = Date.parse(fromIso);
    var to = Date.parse(toIso);
    return isNaN(from) || isNaN(to) ? null : Math.max(0, Math.round((to - from) / 1000));
  }

  function duration(seconds) {
    if (seconds === null) return "–";
    if (seconds < 90) return seconds + " s";
    if (seconds < 5400) return Math.round(seconds / 60) + " min";
    if (seconds < 172800) return (Math.round(seconds / 360) / 10) + " h";
    return Math.round(seconds / 86400) + " d";
  }

  function ago(iso) {
    if (!iso || !last) return "never";
    return duration(secondsBetween(iso, last.now)) + " ago";
  }

  function timeCell(iso) {
    var cell = td(iso ? ago(iso) : "never");
    if (iso) cell.title = clean(iso);
    return cell;
  }

  function short(hash) {
    var text = String(hash);
    return text.length > 14 ? text.slice(0, 8) + "…" + text.slice(-4) : text;
  }

  // ---- token ----

  function token() {
    try { return sessionStorage.getItem(TOKEN_KEY) || ""; } catch (e) { return ""; }
  }

  function setToken(value) {
    try {
      if (value) sessionStorage.setItem(TOKEN_KEY, value);
      else sessionStorage.removeItem(TOKEN_KEY);
    } catch (e) { /* storage disabled: the token lives until the page is left */ }
  }

  function authHeaders(extra) {
    var headers = { accept: "application/json" };
    var t = token();
    if (t) headers.authorization = "Bearer " + t;
    if (extra) Object.keys(extra).forEach(function (k) { headers[k] = extra[k]; });
    return headers;
  }

  function askToken(why, problem, then, cancellable) {
    pendingAction = then || null;
    $("token-why").textContent = why;
    $("token-message").textContent = problem || "";
    $("token-cancel").hidden = !cancellable;
    $("token-panel").hidden = false;
    $("token-input").value = "";
    $("token-input").focus();
  }

  function closeTokenPanel() {
    $("token-panel").hidden = true;
    $("token-message").textContent = "";
    pendingAction = null;
  }

  $("token-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var value = $("token-input").value.trim();
    if (!value) { $("token-message").textContent = "Enter the token first."; return; }
    setToken(value);
    var action = pendingAction;
    closeTokenPanel();
    if (action) action();
    else poll();
  });
  $("token-cancel").addEventListener("click", closeTokenPanel);

  // ---- polling ----

  function showError(text) {
    $("error").textContent = text;
    $("error").hidden = false;
  }

  async function poll() {
    clearTimeout(timer);
    timer = null;
    try {
      var res = await fetch("/status", { headers: authHeaders(), cache: "no-store" });
      if (res.status === 401) {
        var had = token() !== "";
        setToken("");
        $("content").hidden = true;
        $("readiness").textContent = "locked";
        $("readiness").className = "badge warn";
        askToken("This kaiawatch needs its status token (status.token) to show its status.", had ? "That token was refused." : "", null, false);
        return; // polling resumes once a token is given
      }
      if (!res.ok) throw new Error("/status answered HTTP " + res.status);
      var data = await res.json();
      $("error").hidden = true;
      render(data);
    } catch (e) {
      showError("Cannot read /status (" + clean(e && e.message ? e.message : e, 200) + "); trying again.");
      $("readiness").textContent = "unreachable";
      $("readiness").className = "badge bad";
    }
    timer = setTimeout(poll, POLL_MS);
  }

  // ---- rendering ----

  // The daemon judges sources and sinks with the thresholds of the config (operational.*) and
  // /status says its verdict: the page shows that verdict, so that it agrees with /readyz. These
  // are only for a /status without one: a source whose last success is older than this while it
  // fails is failing, a sink whose oldest pending alert is older than this is stalled (the
  // defaults of operational.source_failing_after and operational.sink_pending_age).
  var FAILING_AFTER_S = 120;
  var STALLED_SINK_S = 600;
  var KIND = { ok: "ok", "catching up": "warn", starting: "warn", paused: "warn", retrying: "warn", failing: "bad", stalled: "bad" };
  // The daemon's state names, as the page writes them.
  var STATE_NAME = { catching_up: "catching up" };

  /** Every watch a source serves (a watch sharing another's source is listed with it). */
  function watchNames(s) { return (Array.isArray(s.watches) && s.watches.length ? s.watches : [s.watch]).join(", "); }

  /**
   * ok, catching up, retrying, failing or stalled (plus starting and paused), from what
   * /status says of the source; a daemon that reports the state itself (s.state) is believed.
   * A source cannot succeed while the head is unreachable, whatever its last outcome said.
   */
  function sourceState(s, data) {
    var told = typeof s.state === "string" ? STATE_NAME[s.state] || s.state : null;
    if (told !== null && KIND[told]) return told;
    var headError = data.head && data.head.error;
    if (s.last_outcome === "paused") return "paused";
    if (s.last_outcome === "error" || headError) {
      var since = s.last_ok_at ? secondsBetween(s.last_ok_at, data.now) : null;
      return since === null || since > FAILING_AFTER_S ? "failing" : "retrying";
    }
    if (s.last_outcome === null) return s.running ? "catching up" : "starting";
    if (s.running && s.lag > 0) return "catching up";
    return "ok";
  }

  function sinkTrouble(name, s, data) {
    var conditions = data.health && data.health.conditions;
    if (conditions) {
      if (conditions.some(function (c) { return c.key === "sink_stalled:" + name; })) return "stalled";
    } else {
      var oldest = data.oldest_pending ? data.oldest_pending[name] : null;
      var age = oldest ? secondsBetween(oldest, data.now) : null;
      if (age !== null && age > STALLED_SINK_S) return "stalled";
    }
    if (s.retrying > 0 && s.last_error) return "retrying";
    return null;
  }

  function plural(n, one, many) { return num(n) + " " + (n === 1 ? one : many); }

  function render(data) {
    last = data;
    $("content").hidden = false;
    var sources = data.sources || [];
    var sinks = data.sinks || {};
    var deadTotal = data.dead_letters_total || 0;
    var states = sources.map(function (s) { return sourceState(s, data); });
    var failing = states.filter(function (st) { return KIND[st] === "bad"; }).length;
    var retrying = states.filter(function (st) { return st === "retrying"; }).length;
    var stalled = Object.keys(sinks).filter(function (n) { return sinkTrouble(n, sinks[n], data) === "stalled"; }).length;
    // The badge is the worst of it: not ready, a source failing, a sink stalled, dead letters.
    var bad = [];
    if (failing) bad.push(plural(failing, "source failing", "sources failing"));
    if (stalled) bad.push(plural(stalled, "sink stalled", "sinks stalled"));
    if (deadTotal) bad.push(plural(deadTotal, "dead letter", "dead letters"));
    if (!data.ready && bad.length === 0) bad.push("not ready");
    var warn = retrying ? [plural(retrying, "source retrying", "sources retrying")] : [];
    $("readiness").textContent = bad.length ? bad.join(" · ") : warn.length ? "ready · " + warn.join(" · ") : "ready";
    $("readiness").className = "badge " + (bad.length ? "bad" : warn.length ? "warn" : "ok");
    $("updated").textContent = "updated " + clean(String(data.now).slice(11, 19)) + " UTC";
    var head = data.head || {};
    $("head-block").textContent = num(head.block);
    $("head-read").textContent = head.error ? "failed: " + clean(head.error, 200) : ago(head.read_at);
    $("uptime").textContent = duration(data.uptime_seconds);
    // What is still to be sent, not what the outbox keeps (delivered alerts stay for store.retention).
    var pending = 0;
    Object.keys(sinks).forEach(function (n) { pending += (sinks[n].pending || 0) + (sinks[n].retrying || 0) + (sinks[n].in_flight || 0); });
    $("outbox-size").textContent = num(pending);
    $("dead-total").textContent = num(deadTotal);
    fill($("reasons"), (data.reasons || []).map(function (r) { return el("li", null, r); }));
    renderTrouble(data, sources, states, sinks, !!(data.actions && data.actions.requeue_dead_letters));
    renderSources(sources, states);
    renderAlerts(data.alerts || []);
    renderAlertDetail();
    renderSinks(sinks);
    renderReplicas(data.replicas);
    renderBalances(data.balance_watches || []);
    renderDeadLetters(data.dead_letters || [], deadTotal, !!(data.actions && data.actions.requeue_dead_letters));
    renderCredits(data.credits || {});
    renderRequests(data.requests || {}, data.retries || {}, (data.credits && data.credits.by_operation) || {});
    renderSilences(data.silences || []);
    renderInhibitions(data.inhibitions || { rules: [], active: [] });
  }

  /** The top panel: only what needs a person, so that it fits the first screen. */
  function renderTrouble(data, sources, states, sinks, canRequeue) {
    var troubled = sources.map(function (s, i) { return { s: s, state: states[i] }; }).filter(function (x) { return KIND[x.state] === "bad" || x.state === "retrying"; });
    fill($("trouble-sources"), troubled.map(function (x) {
      var tr = el("tr");
      tr.setAttribute("data-source-key", String(x.s.key));
      var watch = td(watchNames(x.s));
      watch.appendChild(el("div", "subtle", x.s.description));
      var state = el("td");
      state.appendChild(badge(x.state, KIND[x.state]));
      var error = x.s.last_error || (data.head && data.head.error ? "head unreachable: " + data.head.error : "");
      tr.append(watch, state, td(num(x.s.lag), "num"), td(x.s.last_ok_at ? ago(x.s.last_ok_at) : "never"), td(error, "error"));
      return tr;
    }));
    $("trouble-sources-block").hidden = troubled.length === 0;

    var sinkRows = Object.keys(sinks).sort().filter(function (n) { return sinkTrouble(n, sinks[n], data) !== null; });
    fill($("trouble-sinks"), sinkRows.map(function (n) {
      var s = sinks[n];
      var tr = el("tr");
      tr.setAttribute("data-sink", n);
      var name = td(n);
      name.appendChild(document.createTextNode(" "));
      var kind = sinkTrouble(n, s, data);
      name.appendChild(badge(kind, kind === "stalled" ? "bad" : "warn"));
      var oldest = data.oldest_pending ? data.oldest_pending[n] : null;
      tr.append(name, td(num((s.pending || 0) + (s.retrying || 0) + (s.in_flight || 0)), "num"), td(oldest ? ago(oldest) : "–"), td(s.last_error || "", "error"));
      return tr;
    }));
    $("trouble-sinks-block").hidden = sinkRows.length === 0;

    var groups = data.dead_letter_groups || [];
    var total = data.dead_letters_total || 0;
    $("trouble-dead-count").textContent = total ? "(" + plural(total, "alert", "alerts") + " in " + plural(groups.length, "group", "groups") + ")" : "";
    fill($("dead-groups"), groups.map(function (g) {
      var tr = el("tr");
      var what = el("td", "error");
      if (g.digest) {
        what.appendChild(el("div", "mono", "digest " + g.digest));
        if (g.reason) what.appendChild(el("div", null, g.reason));
      } else {
        what.textContent = clean(g.reason || "dead");
      }
      var action = el("td");
      if (canRequeue && g.ids && g.ids.length) {
        var button = el("button", "small requeue-group", "Re-queue " + (g.digest ? "digest" : "these"));
        button.type = "button";
        button.addEventListener("click", function () { requeue({ ids: g.ids }, button, $("group-requeue-message")); });
        action.appendChild(button);
      }
      tr.append(td(g.sink), what, td((g.rules || []).join(", ")), td(num(g.count), "num"), td(ago(g.newest_at)), action);
      return tr;
    }));
    $("trouble-dead-block").hidden = total === 0;

    var any = troubled.length > 0 || sinkRows.length > 0 || total > 0 || (data.reasons || []).length > 0;
    $("trouble").hidden = !any;
    $("all-clear").hidden = any;
  }

  function renderSources(sources, states) {
    fill($("sources-body"), sources.map(function (s, i) {
      var tr = el("tr");
      tr.setAttribute("data-source-key", String(s.key));
      var watch = td(watchNames(s));
      watch.appendChild(el("div", "subtle", s.description));
      var source = td(s.family);
      source.appendChild(el("div", "subtle mono", s.schedule));
      var outcome = el("td");
      outcome.appendChild(badge(states[i], KIND[states[i]]));
      if (s.running) { outcome.appendChild(document.createTextNode(" ")); outcome.appendChild(badge("running", "")); }
      var ticks = td(num(s.ticks) + (s.skipped ? " (" + num(s.skipped) + " skipped)" : ""), "num");
      var lastTick = timeCell(s.last_tick_at);
      // Replicas: the tick was on the replica holding the source, not necessarily this one.
      if (s.holder) lastTick.appendChild(el("div", "subtle", (s.held_here ? "here, " : "on ") + s.holder));
      else if (s.held_here === false) lastTick.appendChild(el("div", "subtle", "held by no replica now"));
      tr.append(watch, source, td(num(s.cursor), "num cursor"), td(num(s.lag), "num lag"), lastTick, outcome, ticks, td(s.last_error || "", "error"));
      return tr;
    }));
  }

  function deliveryBadge(d) {
    var label = d.sink + ": " + (d.state === "pending" && d.attempts > 0 ? "retrying (" + d.attempts + ")" : d.state);
    var b = badge(label, d.state === "delivered" ? "ok" : d.state === "dead" ? "bad" : "warn");
    if (d.error) b.title = clean(d.error);
    return b;
  }

  function renderAlerts(alerts) {
    var first = seenAlerts === null;
    var seen = seenAlerts || {};
    $("alerts-empty").hidden = alerts.length > 0;
    $("alerts-count").textContent = alerts.length ? "(" + alerts.length + " newest)" : "";
    fill($("alerts-list"), alerts.map(function (a) {
      var li = el("li", first || seen[a.id] ? "" : "new");
      li.setAttribute("data-alert-id", String(a.id));
      li.setAttribute("data-block", String(a.block));
      var head = el("div", "alert-head");
      head.append(el("span", "alert-rule", a.rule), el("span", "subtle", a.watch + " · " + a.source));
      var links = a.links || {};
      head.appendChild(link(links.block, "block " + a.block));
      if (a.transaction_hash) head.appendChild(link(links.transaction, "tx " + short(a.transaction_hash)));
      var when = el("span", "subtle", ago(a.created_at));
      when.title = clean(a.created_at);
      head.appendChild(when);
      // The alert's own view: its delivery history (#alert=ID, read from /api/history).
      var historyLink = el("a", "subtle history-link", "history");
      historyLink.href = "#alert=" + encodeURIComponent(String(a.id));
      head.appendChild(historyLink);
      var deliveries = el("div", "deliveries");
      (a.deliveries || []).forEach(function (d) { deliveries.appendChild(deliveryBadge(d)); });
      li.append(head, el("p", "alert-summary", a.summary), deliveries);
      return li;
    }));
    var next = {};
    alerts.forEach(function (a) { next[a.id] = true; });
    seenAlerts = next;
  }

  // ---- one alert: its delivery history ----

  var OUTCOME_KIND = { delivered: "ok", failed: "warn", dead: "bad", suppressed: "" };

  function selectedAlert() {
    var m = /^#alert=(.+)$/.exec(location.hash);
    if (!m) return null;
    try { return decodeURIComponent(m[1]); } catch (e) { return null; }
  }

  /** Every attempt of the alert named in the address (#alert=ID), oldest first; read again at each poll. */
  async function renderAlertDetail() {
    var id = selectedAlert();
    $("alert-detail").hidden = id === null;
    if (id === null) return;
    $("alert-detail-id").textContent = clean(id, 200);
    var known = last && (last.alerts || []).filter(function (a) { return a.id === id; })[0];
    $("alert-detail-summary").textContent = known ? clean(known.summary) : "";
    try {
      var res = await fetch("/api/history?alert=" + encodeURIComponent(id) + "&limit=500", { headers: authHeaders(), cache: "no-store" });
      if (!res.ok) throw new Error("/api/history answered HTTP " + res.status);
      var body = await res.json();
      if (selectedAlert() !== id) return; // another alert was chosen meanwhile
      var attempts = (body.attempts || []).slice().reverse();
      $("alert-history-count").textContent = attempts.length ? "(" + plural(attempts.length, "attempt", "attempts") + ")" : "";
      $("alert-history-empty").hidden = attempts.length > 0;
      $("alert-history-table").hidden = attempts.length === 0;
      fill($("alert-history-body"), attempts.map(function (t) {
        var tr = el("tr");
        tr.setAttribute("data-outcome", clean(t.outcome));
        var outcome = el("td");
        outcome.appendChild(badge(t.outcome, OUTCOME_KIND[t.outcome] || ""));
        tr.append(timeCell(t.at), td(t.sink), td(num(t.attempt), "num"), outcome, td(typeof t.status === "number" ? String(t.status) : null, "num"), td(typeof t.latency_ms === "number" ? num(t.latency_ms) + " ms" : null, "num"), td(t.error || "", "error"));
        return tr;
      }));
    } catch (e) {
      $("alert-history-count").textContent = "(cannot read it: " + clean(e && e.message ? e.message : e, 200) + ")";
    }
  }

  window.addEventListener("hashchange", function () { renderAlertDetail(); });
  $("alert-detail-close").addEventListener("click", function (event) {
    event.preventDefault();
    window.history.replaceState(null, "", location.pathname + location.search);
    renderAlertDetail();
  });

  // Balance watches: who reads each, its last reading, and each rule ok or firing.
  function renderBalances(watches) {
    $("balances").hidden = watches.length === 0;
    fill($("balances-body"), watches.map(function (w) {
      var tr = el("tr");
      tr.setAttribute("data-balance-watch", clean(w.watch));
      var read = w.last_read || {};
      var balances = (read.balances || []).map(function (b) { return b.address.slice(0, 6) + "…" + b.address.slice(-4) + " " + b.balance + " " + b.symbol; }).join("; ");
      var rules = td("");
      (w.rules || []).forEach(function (r) {
        var firing = r.state === "firing";
        var b = badge(r.rule + ": " + r.state, firing ? "bad" : "ok");
        if (firing) b.title = clean(r.firing.map(function (f) { return f.summary; }).join("\n"), 400);
        rules.append(b, " ");
      });
      tr.append(td(w.watch), td(w.holder || "nobody"), td(num(read.block), "num"), td(read.at ? ago(read.at) : "not yet"), td(balances), rules);
      return tr;
    }));
  }

  // Only with PostgreSQL replicas: who is live and what each holds.
  function renderReplicas(replicas) {
    $("replicas").hidden = !Array.isArray(replicas);
    if (!Array.isArray(replicas)) return;
    fill($("replicas-body"), replicas.map(function (r) {
      var tr = el("tr");
      tr.setAttribute("data-replica", clean(r.id));
      tr.append(td(r.id), td(ago(r.started_at)), td(ago(r.heartbeat_at)), td(num((r.sources || []).length), "num"), td((r.sinks || []).join(", ")));
      return tr;
    }));
  }

  function renderSinks(sinks) {
    fill($("sinks-body"), Object.keys(sinks).sort().map(function (name) {
      var s = sinks[name];
      var tr = el("tr");
      tr.setAttribute("data-sink", name);
      var error = td(s.last_error ? s.last_error : "", "error");
      if (s.last_error_at) {
        error.title = clean(s.last_error_at);
        error.appendChild(el("div", "subtle", ago(s.last_error_at)));
      }
      tr.append(td(name), td(s.type), td(num(s.pending), "num"), td(num(s.retrying), "num"), td(num(s.in_flight), "num"), td(num(s.dead), "num dead"), td(num(s.delivered_total), "num"), error);
      return tr;
    }));
  }

  function renderDeadLetters(dead, total, canRequeue) {
    $("dead-count").textContent = total ? "(" + total + (total > dead.length ? ", newest " + dead.length + " shown" : "") + ")" : "";
    $("requeue-note").textContent = canRequeue
      ? (total ? "Re-queueing sends a dead letter again from its first attempt; it needs the status token." : "No dead letter.")
      : (total ? "Read-only: configure status.token to re-queue dead letters from this page (or use kaiawatch outbox retry)." : "No dead letter.");
    $("requeue-all").hidden = !(canRequeue && total > 0);
    $("dead-table").hidden = dead.length === 0;
    fill($("dead-body"), dead.map(function (d) {
      var tr = el("tr");
      tr.setAttribute("data-entry-id", String(d.id));
      var reason = td(d.reason || "", "error");
      reason.appendChild(el("div", "subtle", d.summary));
      var action = el("td");
      if (canRequeue) {
        var button = el("button", "small requeue", "Re-queue");
        button.type = "button";
        button.addEventListener("click", function () { requeue({ ids: [d.id] }, button); });
        action.appendChild(button);
      }
      tr.append(td(d.sink), td(d.rule), el("td", "num"), td(num(d.attempts), "num"), reason, action);
      tr.children[2].appendChild(link(d.links && d.links.block, String(d.block)));
      return tr;
    }));
  }

  $("requeue-all").addEventListener("click", function () { requeue({ all: true }, $("requeue-all")); });

  async function requeue(selector, button, where) {
    var message = where || $("requeue-message");
    if (!token()) {
      askToken("Re-queueing dead letters needs the status token (status.token).", "", function () { requeue(selector, button, where); }, true);
      return;
    }
    button.disabled = true;
    message.className = "";
    message.textContent = "Re-queueing…";
    try {
      var res = await fetch("/api/dead-letters/requeue", { method: "POST", headers: authHeaders({ "content-type": "application/json" }), body: JSON.stringify(selector), cache: "no-store" });
      var body = await res.json().catch(function () { return {}; });
      if (res.status === 401 || res.status === 403) {
        setToken("");
        message.className = "problem";
        message.textContent = "Not re-queued: the token was refused.";
        askToken("Re-queueing dead letters needs the status token (status.token).", "That token was refused.", function () { requeue(selector, button, where); }, true);
        return;
      }
      if (!res.ok) {
        message.className = "problem";
        message.textContent = "Not re-queued: " + clean(body.error || "HTTP " + res.status, 200);
        return;
      }
      var unmatched = body.unmatched && body.unmatched.length ? " (" + body.unmatched.length + " no longer dead)" : "";
      message.textContent = num(body.requeued) + " dead letter" + (body.requeued === 1 ? "" : "s") + " re-queued" + unmatched + ".";
      poll();
    } catch (e) {
      message.className = "problem";
      message.textContent = "Not re-queued: " + clean(e && e.message ? e.message : e, 200);
    } finally {
      button.disabled = false;
    }
  }

  function svg(tag, attrs, text) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function renderCredits(c) {
    var spent = typeof c.spent_today === "number" ? c.spent_today : 0;
    var budget = typeof c.budget === "number" ? c.budget : null;
    $("credits-day").textContent = c.day ? "(" + clean(c.day) + " UTC)" : "";
    var summary = budget === null
      ? num(spent) + " credits spent (no daily budget)"
      : num(spent) + " of " + num(budget) + " credits (" + (budget > 0 ? Math.round((spent / budget) * 1000) / 10 : 0) + "%), " + num(c.remaining_today) + " left";
    if (c.paused_until) summary += " · polling paused until " + clean(c.paused_until);
    $("credits-summary").textContent = summary;

    var W = 480, H = 170, L = 52, R = 20, T = 10, B = 22;
    var dayStart = Date.parse(String(c.day) + "T00:00:00Z");
    var history = (c.history || []).filter(function (p) { return typeof p.spent === "number" && !isNaN(Date.parse(p.at)); });
    var top = Math.max(1, budget || 0, spent);
    history.forEach(function (p) { top = Math.max(top, p.spent); });
    top *= 1.08;
    var x = function (ms) { return L + Math.min(1, Math.max(0, (ms - dayStart) / 86400000)) * (W - L - R); };
    var y = function (v) { return T + (1 - v / top) * (H - T - B); };
    var chart = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "credits spent today, by hour (UTC)" });
    chart.appendChild(svg("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }));
    chart.appendChild(svg("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }));
    [0, 6, 12, 18, 24].forEach(function (h) {
      var px = x(dayStart + h * 3600000);
      chart.appendChild(svg("text", { x: px, y: H - 6, "text-anchor": "middle" }, (h < 10 ? "0" : "") + h + ":00"));
    });
    chart.appendChild(svg("text", { x: L - 6, y: H - B, "text-anchor": "end" }, "0"));
    chart.appendChild(svg("text", { x: L - 6, y: T + 9, "text-anchor": "end" }, num(Math.round(top))));
    if (budget !== null) {
      chart.appendChild(svg("line", { class: "budget", x1: L, y1: y(budget), x2: W - R, y2: y(budget) }));
      chart.appendChild(svg("text", { x: W - R, y: y(budget) - 4, "text-anchor": "end" }, "budget " + num(budget)));
    }
    if (!isNaN(dayStart) && history.length > 0) {
      var points = history.map(function (p) { return x(Date.parse(p.at)).toFixed(1) + "," + y(p.spent).toFixed(1); });
      var firstX = x(Date.parse(history[0].at)).toFixed(1);
      var lastX = x(Date.parse(history[history.length - 1].at)).toFixed(1);
      chart.appendChild(svg("polygon", { class: "area", points: firstX + "," + (H - B) + " " + points.join(" ") + " " + lastX + "," + (H - B) }));
      chart.appendChild(svg("polyline", { class: "spent", points: points.join(" ") }));
      var now = history[history.length - 1];
      chart.appendChild(svg("circle", { class: "now", cx: lastX, cy: y(now.spent).toFixed(1), r: 3 }));
    }
    fill($("credits-chart"), [chart]);
  }

  function renderRequests(requests, retries, credits) {
    var ops = {};
    [requests, retries, credits].forEach(function (o) { Object.keys(o).forEach(function (k) { ops[k] = true; }); });
    fill($("requests-body"), Object.keys(ops).sort().map(function (op) {
      var ok = 0, errors = 0;
      var byStatus = requests[op] || {};
      Object.keys(byStatus).forEach(function (status) {
        if (/^2/.test(status)) ok += byStatus[status];
        else errors += byStatus[status];
      });
      var tr = el("tr");
      tr.setAttribute("data-operation", op);
      var errorCell = td(num(errors), "num" + (errors > 0 ? " error" : ""));
      var codes = Object.keys(byStatus).filter(function (s) { return !/^2/.test(s); });
      if (codes.length) errorCell.title = codes.map(function (s) { return s + ": " + byStatus[s]; }).join(", ");
      tr.append(td(op, "mono"), td(num(ok), "num"), errorCell, td(num(typeof retries[op] === "number" ? retries[op] : 0), "num"), td(num(credits[op] || 0), "num"));
      return tr;
    }));
  }

  function renderSilences(silences) {
    $("silences-empty").hidden = silences.length > 0;
    $("silences-table").hidden = silences.length === 0;
    fill($("silences-body"), silences.map(function (s) {
      // Label matchers in braces, then record fields: the same words as \`kaiawatch silence list\`.
      var labels = (s.matchers || []).length > 0 ? ["{" + s.matchers.join(", ") + "}"] : [];
      var fields = Object.keys(s.match || {}).map(function (k) { return k + "=" + s.match[k]; });
      var match = labels.concat(fields).join(" ");
      var tr = el("tr");
      tr.append(td(s.id, "mono"), td(s.rule || "(any)"), td(match || "(every alert)", "mono"), td(s.reason), td(s.expires_at), td(num(s.suppressed), "num"));
      return tr;
    }));
  }

  function renderInhibitions(inhibitions) {
    var rules = inhibitions.rules || [];
    var active = inhibitions.active || [];
    $("inhibitions-empty").hidden = rules.length > 0;
    $("inhibitions-table").hidden = rules.length === 0;
    fill($("inhibitions-body"), rules.map(function (r) {
      // The firing sources that hold this rule's targets now: the alert being held is named by its source's summary.
      var now = active.filter(function (a) { return a.rule === r.id; }).map(function (a) { return a.summary || a.source; });
      var tr = el("tr");
      tr.append(td(r.id, "mono"), td(r.source_matchers.join(", "), "mono"), td(r.target_matchers.join(", "), "mono"), td(r.equal.join(", ") || "—", "mono"), td(now.join("; ") || "—"), td(num(r.held), "num"));
      return tr;
    }));
  }

  poll();
})();
`;
