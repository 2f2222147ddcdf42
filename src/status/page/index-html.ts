/**
 * The status page's HTML: a skeleton that holds no data and no script of its own; app.js
 * fills it from /status (see page-files.ts for the headers that enforce this).
 */
export const INDEX_HTML = String.raw`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>kaiawatch status</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/app.css">
<script src="/assets/app.js" defer></script>
</head>
<body>
<header class="top">
  <h1>kaiawatch <span class="subtle">status</span></h1>
  <span id="readiness" class="badge">loading…</span>
  <span id="network" class="subtle"></span>
  <span id="updated" class="subtle"></span>
</header>

<section id="token-panel" class="panel" hidden>
  <h2>Status token</h2>
  <p id="token-why">This kaiawatch asks for its status token (<code>status.token</code>).</p>
  <form id="token-form" autocomplete="off">
    <label for="token-input">Token</label>
    <input id="token-input" type="password" spellcheck="false" autocomplete="off">
    <button id="token-submit" type="submit">Use token</button>
    <button id="token-cancel" type="button" hidden>Cancel</button>
  </form>
  <p class="subtle">Kept in this tab only (sessionStorage) and sent as <code>Authorization: Bearer</code> to this server.</p>
  <p id="token-message" class="problem" role="alert"></p>
</section>

<p id="error" class="problem panel" role="alert" hidden></p>

<main id="content" hidden>
  <section class="panel trouble" id="trouble" hidden>
    <h2>Needs attention</h2>
    <ul id="reasons" class="problem"></ul>
    <div id="trouble-sources-block" hidden>
      <h3>Sources in trouble</h3>
      <table>
        <thead><tr><th>Watch</th><th>State</th><th class="num">Lag</th><th>Last success</th><th>Last error</th></tr></thead>
        <tbody id="trouble-sources"></tbody>
      </table>
    </div>
    <div id="trouble-sinks-block" hidden>
      <h3>Sinks falling behind</h3>
      <table>
        <thead><tr><th>Sink</th><th class="num">Pending</th><th>Oldest pending</th><th>Last error</th></tr></thead>
        <tbody id="trouble-sinks"></tbody>
      </table>
    </div>
    <div id="trouble-dead-block" hidden>
      <h3>Dead letters <span class="subtle" id="trouble-dead-count"></span></h3>
      <p id="group-requeue-message" role="status"></p>
      <table>
        <thead><tr><th>Sink</th><th>Digest or reason</th><th>Rules</th><th class="num">Alerts</th><th>Newest</th><th></th></tr></thead>
        <tbody id="dead-groups"></tbody>
      </table>
    </div>
  </section>

  <section class="panel" id="overview">
    <dl class="facts">
      <div><dt>Head</dt><dd id="head-block">–</dd></div>
      <div><dt>Head read</dt><dd id="head-read">–</dd></div>
      <div><dt>Uptime</dt><dd id="uptime">–</dd></div>
      <div><dt>Pending deliveries</dt><dd id="outbox-size">–</dd></div>
      <div><dt>Dead letters</dt><dd id="dead-total">–</dd></div>
    </dl>
    <p id="all-clear" class="subtle" hidden>Nothing needs attention.</p>
  </section>

  <section class="panel" id="sources">
    <h2>Sources</h2>
    <table>
      <thead><tr><th>Watch</th><th>Source</th><th class="num">Cursor</th><th class="num">Lag</th><th>Last tick</th><th>State</th><th class="num">Ticks</th><th>Last error</th></tr></thead>
      <tbody id="sources-body"></tbody>
    </table>
  </section>

  <section class="panel" id="balances" hidden>
    <h2>Balance watches</h2>
    <table>
      <thead><tr><th>Watch</th><th>Read by</th><th class="num">Block</th><th>Read</th><th>Balances</th><th>Rules</th></tr></thead>
      <tbody id="balances-body"></tbody>
    </table>
  </section>

  <section class="panel" id="replicas" hidden>
    <h2>Replicas</h2>
    <table>
      <thead><tr><th>Replica</th><th>Started</th><th>Heartbeat</th><th class="num">Sources</th><th>Sinks</th></tr></thead>
      <tbody id="replicas-body"></tbody>
    </table>
  </section>

  <section class="panel" id="alert-detail" hidden>
    <h2>Alert <span class="mono" id="alert-detail-id"></span> <a href="#" id="alert-detail-close" class="subtle">close</a></h2>
    <p id="alert-detail-summary"></p>
    <h3>Delivery history <span class="subtle" id="alert-history-count"></span></h3>
    <p id="alert-history-empty" class="subtle" hidden>No delivery attempt recorded: none made yet, or all older than store.retention.</p>
    <table id="alert-history-table" hidden>
      <thead><tr><th>Time</th><th>Sink</th><th class="num">Attempt</th><th>Outcome</th><th class="num">Status</th><th class="num">Latency</th><th>Error</th></tr></thead>
      <tbody id="alert-history-body"></tbody>
    </table>
  </section>

  <section class="panel" id="alerts">
    <h2>Latest alerts <span class="subtle" id="alerts-count"></span></h2>
    <p id="alerts-empty" class="subtle">No alert yet.</p>
    <ol id="alerts-list" class="alerts"></ol>
  </section>

  <div class="columns">
    <section class="panel" id="outbox">
      <h2>Outbox</h2>
      <table>
        <thead><tr><th>Sink</th><th>Type</th><th class="num">Waiting</th><th class="num">Retrying</th><th class="num">In flight</th><th class="num">Dead</th><th class="num">Delivered</th><th>Last error</th></tr></thead>
        <tbody id="sinks-body"></tbody>
      </table>
      <h3>Dead letters <span class="subtle" id="dead-count"></span></h3>
      <p id="requeue-note" class="subtle"></p>
      <p><button id="requeue-all" type="button" hidden>Re-queue all dead letters</button></p>
      <p id="requeue-message" role="status"></p>
      <table id="dead-table" hidden>
        <thead><tr><th>Sink</th><th>Rule</th><th class="num">Block</th><th class="num">Attempts</th><th>Reason</th><th></th></tr></thead>
        <tbody id="dead-body"></tbody>
      </table>
    </section>

    <section class="panel" id="credits">
      <h2>Credits today <span class="subtle" id="credits-day"></span></h2>
      <p id="credits-summary"></p>
      <div id="credits-chart" class="chart"></div>
      <h3>API requests</h3>
      <table>
        <thead><tr><th>Operation</th><th class="num">OK</th><th class="num">Errors</th><th class="num">Retries</th><th class="num">Credits</th></tr></thead>
        <tbody id="requests-body"></tbody>
      </table>
    </section>
  </div>

  <section class="panel" id="silences">
    <h2>Silences</h2>
    <p id="silences-empty" class="subtle">No active silence.</p>
    <table id="silences-table" hidden>
      <thead><tr><th>Id</th><th>Rule</th><th>Match</th><th>Reason</th><th>Expires</th><th class="num">Held back</th></tr></thead>
      <tbody id="silences-body"></tbody>
    </table>
  </section>
</main>
<footer class="subtle">JSON at <a href="/status">/status</a> · <a href="/metrics">/metrics</a> · <a href="/readyz">/readyz</a></footer>
</body>
</html>
`;
