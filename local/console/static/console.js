// The console's behaviour: one event stream of snapshots in, the stand-in's control API out.
//
// The page keeps only what the stand-in cannot: whom it acts as and which
// channel and thread it shows (in the address's #fragment, so a reload
// comes back to them), which task cards are expanded, and what is being
// typed. Every snapshot replaces what is shown; a message is redrawn only
// when its HTML changed, so a growing stream does not disturb the rest.
"use strict";

(() => {
  const $ = (selector) => document.querySelector(selector);
  const BOT_USER = "U0KOURIER";
  const BOT_ID = "B0KOURIER";

  const page = {
    focus: readFocus(),
    snapshot: null,
    source: null,
    expanded: new Set(),
    tab: "calls",
    modalKey: "",
  };

  function readFocus() {
    const params = new URLSearchParams(location.hash.slice(1));
    return { user: params.get("as") || "U0ALICE", channel: params.get("channel") || "", thread: params.get("thread") || "" };
  }

  function setFocus(change) {
    Object.assign(page.focus, change);
    const params = new URLSearchParams({ as: page.focus.user });
    if (page.focus.channel) params.set("channel", page.focus.channel);
    if (page.focus.thread) params.set("thread", page.focus.thread);
    history.replaceState(null, "", `#${params}`);
    connect();
  }

  // --- the event stream ---------------------------------------------------------------------

  function connect() {
    if (page.source) page.source.close();
    const query = new URLSearchParams({ user: page.focus.user, channel: page.focus.channel, thread: page.focus.thread });
    const source = new EventSource(`/_console/events?${query}`);
    page.source = source;
    source.onopen = () => connection(true);
    source.onerror = () => connection(false);
    source.onmessage = (event) => {
      if (source === page.source) show(JSON.parse(event.data));
    };
  }

  function connection(up) {
    const line = $("#connection");
    line.textContent = up ? "live" : "reconnecting…";
    line.classList.toggle("down", !up);
  }

  // --- showing a snapshot ---------------------------------------------------------------------

  function show(snapshot) {
    page.snapshot = snapshot;
    Render.setPeople(snapshot.users);
    if (!page.focus.channel && snapshot.channels.length) {
      setFocus({ channel: snapshot.channels[0].id });
      return;
    }
    document.body.dataset.version = snapshot.version;
    showSidebar(snapshot);
    showChannel(snapshot);
    showThread(snapshot);
    showUnderneath(snapshot.thread);
    showModal(snapshot);
  }

  function showSidebar(snapshot) {
    const viewer = $("#viewer");
    const people = snapshot.users.filter((u) => !u.is_bot);
    const options = people
      .map((u) => `<option value="${Render.esc(u.id)}">${Render.esc(u.real_name)}${u.approver_of.length ? " (approver)" : ""}</option>`)
      .join("");
    if (viewer.dataset.options !== options) {
      viewer.innerHTML = options;
      viewer.dataset.options = options;
    }
    viewer.value = page.focus.user;
    const me = people.find((u) => u.id === page.focus.user);
    $("#viewer-role").textContent = !me
      ? ""
      : me.approver_of.length
        ? `${me.id}, approves tool calls in ${me.approver_of.join(", ")}`
        : `${me.id}, approves no tool calls`;
    $("#channels").innerHTML = snapshot.channels
      .map((c) => `<li><button type="button" data-act="open-channel" data-channel="${Render.esc(c.id)}" class="${c.id === page.focus.channel ? "current" : ""}"># ${Render.esc(c.id)}</button></li>`)
      .join("");
  }

  function options(extra) {
    return { selections: page.snapshot.selections, feedback: page.snapshot.feedback || {}, expanded: page.expanded, ...extra };
  }

  const asBot = (ephemeral) => ({ ...ephemeral, user: BOT_USER, bot_id: BOT_ID, timeline: [{ kind: "text", text: ephemeral.text }] });

  function showChannel(snapshot) {
    $("#channel-name").textContent = `# ${page.focus.channel}`;
    const channel = snapshot.channels.find((c) => c.id === page.focus.channel);
    const items = (channel ? channel.messages : []).map((m) => ({
      key: m.ts,
      html: Render.message(m, options({ replies: m.reply_count, selected: m.ts === page.focus.thread })),
    }));
    for (const e of snapshot.ephemerals.filter((e) => !e.thread_ts)) {
      items.push({ key: `e${e.ts}`, ts: e.ts, html: Render.message(asBot(e), options({ ephemeral: true })) });
    }
    patch($("#channel-messages"), sortByTs(items));
  }

  function showThread(snapshot) {
    const pane = $(".thread-pane");
    const thread = snapshot.thread;
    pane.hidden = !thread;
    if (!thread) return;
    const items = thread.messages.map((m) => ({ key: m.ts, html: Render.message(m, options()) }));
    for (const e of snapshot.ephemerals.filter((e) => e.thread_ts === thread.ts)) {
      items.push({ key: `e${e.ts}`, ts: e.ts, html: Render.message(asBot(e), options({ ephemeral: true })) });
    }
    patch($("#thread-messages"), sortByTs(items));
    const status = thread.status;
    const loading = status && status.loading_messages.length ? status.loading_messages[0] : "";
    $("#status-line").innerHTML = status
      ? `<span class="dots" aria-hidden="true"></span> <b>Agent Kourier</b> ${Render.esc(status.status)}${loading ? ` <span class="loading">${Render.esc(loading)}</span>` : ""}`
      : "";
    $("#session").innerHTML = sessionHtml(thread);
  }

  // Slack's agent session of the thread: its title, its status, and the stop button while Slack
  // shows one (processing, and the app subscribes to agent_session_stopped).
  function sessionHtml(thread) {
    const session = thread.session;
    if (!session) return "";
    const stop = session.stop_button
      ? `<button type="button" class="stop" data-act="stop" data-channel="${Render.esc(thread.channel)}" data-ts="${Render.esc(thread.ts)}">Stop</button>`
      : "";
    const title = session.title ? `<span class="session-title">${Render.esc(session.title)}</span>` : "";
    return `${title}<span class="session-status ${Render.esc(session.status)}" title="agent session">${Render.esc(session.status)}</span>${stop}`;
  }

  const sortByTs = (items) => items.sort((a, b) => Number(a.ts || a.key) - Number(b.ts || b.key));

  // Redraws only the items whose HTML changed; keeps the list scrolled to the end if it was.
  function patch(container, items) {
    const atEnd = container.scrollHeight - container.scrollTop - container.clientHeight < 40;
    const existing = new Map([...container.children].map((child) => [child.dataset.key, child]));
    let previous = null;
    for (const item of items) {
      let node = existing.get(item.key);
      if (!node || node.dataset.html !== item.html) {
        const fresh = document.createElement("div");
        fresh.className = "item";
        fresh.dataset.key = item.key;
        fresh.dataset.html = item.html;
        fresh.innerHTML = item.html;
        if (node) node.replaceWith(fresh);
        node = fresh;
      }
      existing.delete(item.key);
      const expected = previous ? previous.nextSibling : container.firstChild;
      if (node !== expected) container.insertBefore(node, expected);
      previous = node;
    }
    for (const stale of existing.values()) stale.remove();
    if (atEnd) container.scrollTop = container.scrollHeight;
  }

  // --- underneath -------------------------------------------------------------------------------

  const json = (value) => `<pre class="json">${Render.esc(JSON.stringify(value, null, 2))}</pre>`;

  function showUnderneath(thread) {
    const panel = $(".underneath");
    panel.hidden = !thread;
    if (!thread) return;
    const counts = { calls: thread.calls_total, store: thread.store.turns.length, agent: thread.agent.length };
    for (const tab of panel.querySelectorAll("[role=tab]")) {
      tab.setAttribute("aria-selected", String(tab.dataset.tab === page.tab));
      tab.dataset.count = counts[tab.dataset.tab];
    }
    const html = page.tab === "calls" ? callsHtml(thread) : page.tab === "store" ? storeHtml(thread.store) : agentHtml(thread.agent);
    const body = $("#underneath-body");
    if (body.dataset.html !== html) {
      const open = new Set([...body.querySelectorAll("details[open]")].map((d) => d.dataset.key));
      body.innerHTML = html;
      body.dataset.html = html;
      for (const details of body.querySelectorAll("details")) details.open = open.has(details.dataset.key);
    }
  }

  function callsHtml(thread) {
    if (!thread.calls.length) return '<p class="empty">No Web API calls about this thread yet.</p>';
    const shown = thread.calls_total > thread.calls.length ? `<p class="note">the newest ${thread.calls.length} of ${thread.calls_total}</p>` : "";
    return shown + thread.calls
      .map((call, index) => {
        const outcome = call.status_code !== 200 ? `${call.status_code} ${call.error || ""}` : call.ok ? "ok" : call.error;
        const bad = call.status_code !== 200 || !call.ok;
        return `<details class="call${bad ? " failed" : ""}" data-key="call-${index}-${Render.esc(call.at)}">
          <summary><time>${Render.clock(call.at)}</time> <b>${Render.esc(call.method)}</b> <span class="outcome">${Render.esc(outcome)}</span></summary>
          <div class="label">arguments</div>${json(call.params)}<div class="label">answer</div>${json(call.answer)}</details>`;
      })
      .join("");
  }

  function storeHtml(store) {
    if (!store.watching) return '<p class="empty">No Firestore emulator to watch (FIRESTORE_EMULATOR_HOST is not set).</p>';
    const turns = store.turns
      .map((turn) => `<details class="turn" data-key="turn-${Render.esc(turn.id)}">
        <summary><b class="turn-status ${Render.esc(turn.status)}">${Render.esc(turn.status)}</b>
          ${turn.outcome ? `<span class="outcome">${Render.esc(turn.outcome)}</span>` : ""}
          <span class="who">${Render.esc(turn.user ? Render.nameOf(turn.user) : turn.trigger || "")}</span>
          <span class="turn-text">${Render.esc((turn.text || "").slice(0, 80))}</span></summary>${json(turn)}</details>`)
      .join("");
    const sessions = store.sessions
      .map((s) => `<details class="session-doc" data-key="session-${Render.esc(s.id)}"><summary>session <b>${Render.esc(s.binding)}</b>
        ${s.active_turn ? "· a turn in flight" : "· idle"}${s.open_question ? " · waiting for an answer" : ""}</summary>${json(s)}</details>`)
      .join("");
    return (turns || '<p class="empty">No turn stored for this thread.</p>') + sessions;
  }

  function agentHtml(requests) {
    if (!requests.length) return '<p class="empty">No request to the demo agent names this thread.</p>';
    return requests
      .map((request, index) => {
        const message = (request.params && request.params.message) || {};
        const said = (message.parts || []).map((p) => p.text || (p.data ? JSON.stringify(p.data) : "")).join(" ");
        return `<details class="request" data-key="request-${index}"><summary><b>${Render.esc(request.method || request.path)}</b>
          <span class="turn-text">${Render.esc(said.slice(0, 100))}</span></summary>${json(request)}</details>`;
      })
      .join("");
  }

  // --- modals --------------------------------------------------------------------------------------

  function showModal(snapshot) {
    const backdrop = $("#modal");
    const view = snapshot.views[snapshot.views.length - 1];
    const key = view ? JSON.stringify([view.id, view.view.hash, view.view.blocks, view.errors]) : "";
    if (key === page.modalKey) return;
    const typed = readModal();
    page.modalKey = key;
    backdrop.hidden = !view;
    if (!view) {
      backdrop.innerHTML = "";
      return;
    }
    const v = view.view;
    const where = { channel: "", ts: "", selections: {}, errors: view.errors };
    backdrop.innerHTML = `<form class="modal" role="dialog" aria-modal="true" aria-label="${Render.esc(Render.plain(v.title))}" data-view="${Render.esc(view.id)}">
      <header>${Render.esc(Render.plain(v.title))}</header>
      <div class="modal-body">${(v.blocks || []).map((b) => Render.block(b, where, page.expanded)).join("")}</div>
      <footer><button type="button" data-act="close-view">${Render.esc(Render.plain(v.close) || "Cancel")}</button>
        ${v.submit ? `<button type="submit" class="primary">${Render.esc(Render.plain(v.submit))}</button>` : ""}</footer>
    </form>`;
    for (const [actionId, value] of Object.entries(typed)) {
      const field = backdrop.querySelector(`[data-input="${CSS.escape(actionId)}"]`);
      if (field && typeof value === "string" && "value" in field) field.value = value;
    }
    const first = backdrop.querySelector("textarea, input, select");
    if (first) first.focus();
  }

  // What the modal's inputs hold, by action_id (a list for multiple choices).
  function readModal() {
    const values = {};
    for (const field of document.querySelectorAll("#modal [data-input]")) {
      const id = field.dataset.input;
      if (field.dataset.choices) {
        const ticked = [...field.querySelectorAll("input:checked")].map((i) => i.value);
        values[id] = field.dataset.choices === "radio" ? ticked[0] : ticked;
      } else if (field.dataset.multiple) {
        values[id] = [...field.selectedOptions].map((o) => o.value);
      } else {
        values[id] = field.value;
      }
    }
    return values;
  }

  // --- acting -------------------------------------------------------------------------------------

  // Actions leave one at a time, in the order they were made (two ticks of a checkbox must
  // reach Kourier in order, or the first could overwrite the second).
  let queue = Promise.resolve();
  function control(path, body) {
    const sent = queue.then(() => send(path, body));
    queue = sent.catch(() => undefined);
    return sent;
  }

  async function send(path, body) {
    const answer = await fetch(`/_standin/${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const data = await answer.json().catch(() => ({}));
    if (!answer.ok) throw new Error(data.error || `${answer.status}`);
    const deliveries = data.deliveries || (data.delivery ? [data.delivery] : []);
    const failed = deliveries.find((d) => d.status !== 200);
    if (failed) toast(`Kourier answered ${failed.status || failed.error} to the ${failed.kind}`);
    return data;
  }

  function toast(text) {
    const box = $("#toast");
    box.textContent = text;
    box.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => (box.hidden = true), 6000);
  }

  const attempt = (promise) => promise.catch((error) => toast(`The stand-in refused: ${error.message}`));

  // A click names its element by action_id, and by block_id only where the message has the
  // action_id twice: a prompt updated since it was drawn has new block_ids (Kourier sets none),
  // and Slack's client would send the click on the element it shows now.
  function click(target, extra) {
    const { channel, ts, actionId, blockId } = target.dataset;
    const twins = (target.closest("article") || document).querySelectorAll(`[data-action-id="${CSS.escape(actionId)}"]`);
    const body = {
      channel,
      message_ts: ts,
      action_id: actionId,
      block_id: twins.length > 1 ? blockId : null,
      user: page.focus.user,
      ...extra,
    };
    return attempt(control("actions", body));
  }

  document.addEventListener("click", (event) => {
    const target = event.target.closest("[data-act]");
    if (!target || target.disabled) return;
    const act = target.dataset.act;
    if (act === "button") {
      if (target.dataset.url) window.open(target.dataset.url, "_blank", "noopener");
      click(target, target.dataset.value ? { value: target.dataset.value } : {});
    } else if (act === "open-thread") {
      setFocus({ thread: target.dataset.ts });
    } else if (act === "close-thread") {
      setFocus({ thread: "" });
    } else if (act === "open-channel") {
      setFocus({ channel: target.dataset.channel, thread: "" });
    } else if (act === "toggle-task") {
      const key = target.closest("[data-task-key]").dataset.taskKey;
      if (!page.expanded.delete(key)) page.expanded.add(key);
      show(page.snapshot);
    } else if (act === "close-view") {
      attempt(control(`views/${$("#modal form").dataset.view}/close`, {}));
    } else if (act === "stop") {
      const { channel, ts } = target.dataset;
      attempt(control(`channels/${encodeURIComponent(channel)}/threads/${encodeURIComponent(ts)}/stop`, { user: page.focus.user }));
    }
  });

  document.addEventListener("change", (event) => {
    const group = event.target.closest("[data-act]");
    if (!group) return;
    if (group.dataset.act === "checkboxes") {
      const values = [...group.querySelectorAll("input:checked")].map((i) => i.value);
      click(group, { values });
    } else if (group.dataset.act === "select") {
      click(group, { value: group.value });
    } else if (group.dataset.act === "multi-select") {
      click(group, { values: [...group.selectedOptions].map((o) => o.value) });
    }
  });

  document.addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.target;
    if (form.matches(".modal")) {
      attempt(control(`views/${form.dataset.view}/submit`, { values: readModal() }));
      return;
    }
    const text = form.elements.text.value.trim();
    if (!text) return;
    const inThread = form.id === "thread-composer";
    const body = {
      channel: page.focus.channel,
      text,
      user: page.focus.user,
      thread_ts: inThread ? page.focus.thread : null,
      as_mention: form.elements.mention.checked,
    };
    form.elements.text.value = "";
    attempt(control("messages", body)).then((posted) => {
      if (posted && !inThread) setFocus({ thread: posted.ts });
    });
  });

  document.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && event.target.matches(".composer textarea")) {
      event.preventDefault();
      event.target.form.requestSubmit();
    }
  });

  $("#viewer").addEventListener("change", (event) => setFocus({ user: event.target.value }));
  for (const tab of document.querySelectorAll(".underneath [role=tab]")) {
    tab.addEventListener("click", () => {
      page.tab = tab.dataset.tab;
      if (page.snapshot) showUnderneath(page.snapshot.thread);
    });
  }
  window.addEventListener("hashchange", () => {
    page.focus = readFocus();
    connect();
  });

  connect();
})();
