// Rendering: the stand-in's records (messages, blocks, task cards, views) as HTML strings.
//
// Everything the app or a person wrote is escaped first and then given the
// little markup Slack shows: mrkdwn for posted text and mrkdwn text
// objects, standard Markdown for streamed text and markdown blocks, and
// the <@U…>, <#C…>, <!here> and <url|label> forms in both. Interactive
// elements carry data-* attributes that console.js acts on.
"use strict";

const Render = (() => {
  const ENTITIES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  const esc = (value) => String(value ?? "").replace(/[&<>"']/g, (c) => ENTITIES[c]);
  const unentity = (text) => text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

  // Only web and mail addresses become links: a javascript: address in a message stays text.
  const SAFE_URL = /^(https?:|mailto:)/i;
  const link = (url, label) =>
    SAFE_URL.test(String(url)) ? `<a href="${esc(url)}" target="_blank" rel="noopener">${esc(label)}</a>` : esc(label);

  let people = {};
  const setPeople = (users) => {
    people = Object.fromEntries(users.map((u) => [u.id, u]));
  };
  const nameOf = (id) => {
    const user = people[id];
    return user ? user.display_name || user.real_name : id;
  };
  const fullNameOf = (id) => (people[id] ? people[id].real_name : id);

  // --- text ---------------------------------------------------------------------------

  function slackToken(inner) {
    const [target, label] = inner.split("|", 2);
    if (/^@[UW][A-Z0-9]+$/.test(target)) {
      return `<span class="mention">@${esc(nameOf(target.slice(1)))}</span>`;
    }
    if (/^#C[A-Z0-9]+$/.test(target)) return `<span class="mention">#${esc(label || target.slice(1))}</span>`;
    if (/^!(here|channel|everyone)$/i.test(target)) return `<span class="mention">@${esc(target.slice(1))}</span>`;
    if (target.startsWith("!")) return `<span class="mention">${esc(label || target.slice(1))}</span>`;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return link(unentity(target), unentity(label || target));
    return null;
  }

  function inline(text, flavour) {
    const held = [];
    const hold = (html) => `\u0001${held.push(html) - 1}\u0002`;
    let out = text.replace(/`([^`\n]+)`/g, (_, code) => hold(`<code>${esc(unentity(code))}</code>`));
    out = out.replace(/<([^<>\n]+)>/g, (whole, inner) => {
      const html = slackToken(inner);
      return html === null ? whole : hold(html);
    });
    if (flavour === "markdown") {
      out = out.replace(/\[([^\]\n]+)\]\((https?:[^)\s]+)\)/g, (_, label, url) => hold(link(url, unentity(label))));
    }
    out = esc(unentity(out));
    if (flavour === "markdown") {
      out = out
        .replace(/\*\*(?=\S)([^*\n]*?\S)\*\*/g, "<b>$1</b>")
        .replace(/__(?=\S)([^_\n]*?\S)__/g, "<b>$1</b>")
        .replace(/~~(?=\S)([^~\n]*?\S)~~/g, "<s>$1</s>")
        .replace(/(^|[^\w*])\*(?=\S)([^*\n]*?\S)\*(?!\w)/g, "$1<i>$2</i>")
        .replace(/(^|[^\w_])_(?=\S)([^_\n]*?\S)_(?!\w)/g, "$1<i>$2</i>");
    } else {
      out = out
        .replace(/(^|[^\w*])\*(?=\S)([^*\n]*?\S)\*(?!\w)/g, "$1<b>$2</b>")
        .replace(/(^|[^\w_])_(?=\S)([^_\n]*?\S)_(?!\w)/g, "$1<i>$2</i>")
        .replace(/(^|[^\w~])~(?=\S)([^~\n]*?\S)~(?!\w)/g, "$1<s>$2</s>");
    }
    return out.replace(/\u0001(\d+)\u0002/g, (_, i) => held[Number(i)]);
  }

  // Block structure: code fences, quotes, and (Markdown) headings and lists.
  function text(source, flavour) {
    const parts = String(source ?? "").split(/```/);
    return parts
      .map((part, index) => {
        if (index % 2 === 1) {
          const code = part.replace(/^[\w+-]*\n/, "").replace(/\n$/, "");
          return `<pre>${esc(unentity(code))}</pre>`;
        }
        return lines(part, flavour);
      })
      .join("");
  }

  function lines(source, flavour) {
    const html = [];
    let list = null;
    const closeList = () => {
      if (list) html.push(`</${list}>`);
      list = null;
    };
    for (const line of source.split("\n")) {
      const quote = /^(>|&gt;) ?(.*)$/.exec(line);
      const heading = flavour === "markdown" && /^(#{1,6}) (.*)$/.exec(line);
      const bullet = flavour === "markdown" && /^\s*[-*+] (.*)$/.exec(line);
      const numbered = flavour === "markdown" && /^\s*\d+[.)] (.*)$/.exec(line);
      if (bullet || numbered) {
        const kind = bullet ? "ul" : "ol";
        if (list !== kind) {
          closeList();
          html.push(`<${kind}>`);
          list = kind;
        }
        html.push(`<li>${inline((bullet || numbered)[1], flavour)}</li>`);
        continue;
      }
      closeList();
      if (quote) html.push(`<blockquote>${inline(quote[2], flavour)}</blockquote>`);
      else if (heading) html.push(`<div class="heading h${heading[1].length}">${inline(heading[2], flavour)}</div>`);
      else if (line.trim() === "") html.push('<div class="gap"></div>');
      else html.push(`<div class="line">${inline(line, flavour)}</div>`);
    }
    closeList();
    return html.join("");
  }

  const mrkdwn = (source) => text(source, "mrkdwn");
  const markdown = (source) => text(source, "markdown");

  // A text object: plain_text as written, mrkdwn read.
  function textObject(object) {
    if (!object) return "";
    if (typeof object === "string") return mrkdwn(object);
    return object.type === "mrkdwn" ? mrkdwn(object.text) : esc(object.text);
  }
  const plain = (object) => (object && typeof object === "object" ? String(object.text ?? "") : String(object ?? ""));

  // --- task cards ------------------------------------------------------------------------

  const TASK_ICONS = { pending: "○", in_progress: "◌", complete: "✓", error: "✕" };
  const TASK_WORDS = { pending: "pending", in_progress: "in progress", complete: "complete", error: "failed" };

  function taskCard(card, key, expanded) {
    const status = card.left_unfinished ? "error" : card.status;
    const hasMore = Boolean(card.output || (card.sources && card.sources.length));
    const open = hasMore && expanded.has(key);
    const sources = (card.sources || [])
      .map((s) => `<li>${s.url ? link(s.url, s.text || s.url) : esc(s.text)}</li>`)
      .join("");
    return `<div class="task ${status}${open ? " open" : ""}" data-task-key="${esc(key)}">
      <button type="button" class="task-head" data-act="toggle-task" aria-expanded="${open}" ${hasMore ? "" : "disabled"}>
        <span class="task-icon" aria-hidden="true">${TASK_ICONS[status] || "?"}</span>
        <span class="task-title">${esc(card.title)}</span>
        <span class="task-status">${card.left_unfinished ? "Something went wrong" : TASK_WORDS[status] || esc(status)}</span>
      </button>
      ${card.details ? `<div class="task-details">${esc(card.details)}</div>` : ""}
      ${open ? `<div class="task-output">${card.output ? markdown(card.output) : ""}${sources ? `<ul class="sources">${sources}</ul>` : ""}</div>` : ""}
    </div>`;
  }

  function plan(message, expanded) {
    const done = message.tasks.filter((c) => c.status === "complete").length;
    return `<div class="plan"><div class="plan-title">${esc(message.plan_title || "Plan")}
      <span class="plan-count">${done} of ${message.tasks.length} complete</span></div>
      ${message.tasks.map((c) => taskCard(c, `${message.ts}/${c.id}`, expanded)).join("")}</div>`;
  }

  // --- blocks and elements --------------------------------------------------------------

  function element(el, where) {
    const data = (extra) =>
      `data-channel="${esc(where.channel)}" data-ts="${esc(where.ts)}" data-block-id="${esc(where.blockId)}" data-action-id="${esc(el.action_id)}" ${extra || ""}`;
    switch (el.type) {
      case "button": {
        const style = el.style ? ` ${esc(el.style)}` : "";
        const url = el.url && SAFE_URL.test(el.url) ? `data-url="${esc(el.url)}"` : "";
        return `<button type="button" class="block-button${style}" data-act="button" ${data(url)}>${esc(plain(el.text))}</button>`;
      }
      case "checkboxes": {
        const key = `${where.channel}/${where.ts}/${el.action_id}`;
        const ticked = new Set(where.selections[key] || (el.initial_options || []).map((o) => String(o.value)));
        return `<fieldset class="checkboxes" data-act="checkboxes" ${data()}>${(el.options || [])
          .map((o) => `<label><input type="checkbox" value="${esc(o.value)}"${ticked.has(String(o.value)) ? " checked" : ""}> ${textObject(o.text)}</label>`)
          .join("")}</fieldset>`;
      }
      case "static_select":
      case "multi_static_select":
      case "radio_buttons": {
        const multiple = el.type === "multi_static_select";
        const key = `${where.channel}/${where.ts}/${el.action_id}`;
        const chosen = new Set(where.selections[key] || []);
        const options = [...(el.options || []), ...(el.option_groups || []).flatMap((g) => g.options)];
        return `<select class="select" data-act="${multiple ? "multi-select" : "select"}" ${multiple ? "multiple" : ""} ${data()}>
          ${multiple ? "" : `<option value="">${esc(plain(el.placeholder) || "Choose…")}</option>`}
          ${options.map((o) => `<option value="${esc(o.value)}"${chosen.has(String(o.value)) ? " selected" : ""}>${esc(plain(o.text))}</option>`).join("")}
        </select>`;
      }
      case "feedback_buttons": {
        // The viewer's last click shows pressed, as Slack shows it to whoever clicked.
        const chosen = (where.feedback || {})[where.ts];
        const button = (b, mood) =>
          `<button type="button" class="feedback ${mood}" aria-pressed="${chosen === mood}" data-act="button" ${data(`data-value="${esc(b.value)}"`)} aria-label="${esc(b.accessibility_label || plain(b.text))}">${esc(plain(b.text))}</button>`;
        return `<span class="feedback-buttons">${button(el.positive_button, "positive")}${button(el.negative_button, "negative")}</span>`;
      }
      case "icon_button":
        return `<button type="button" class="block-button icon" data-act="button" ${data()}>${esc(plain(el.text) || el.icon)}</button>`;
      case "image":
        return `<span class="image">[${esc(el.alt_text || "image")}]</span>`;
      case "plain_text":
      case "mrkdwn":
        return `<span>${textObject(el)}</span>`;
      default:
        return `<span class="unknown">&lt;${esc(el.type)}&gt;</span>`;
    }
  }

  function richText(elements) {
    return (elements || [])
      .map((el) => {
        switch (el.type) {
          case "rich_text_section":
            return `<div class="line">${richText(el.elements)}</div>`;
          case "rich_text_preformatted":
            return `<pre>${(el.elements || []).map((e) => esc(e.text || "")).join("")}</pre>`;
          case "rich_text_quote":
            return `<blockquote>${richText(el.elements)}</blockquote>`;
          case "rich_text_list": {
            const tag = el.style === "ordered" ? "ol" : "ul";
            return `<${tag}>${(el.elements || []).map((item) => `<li>${richText(item.elements)}</li>`).join("")}</${tag}>`;
          }
          case "user":
            return `<span class="mention">@${esc(nameOf(el.user_id))}</span>`;
          case "channel":
            return `<span class="mention">#${esc(el.channel_id)}</span>`;
          case "link":
            return link(el.url, el.text || el.url);
          case "emoji":
            return el.unicode ? String.fromCodePoint(...el.unicode.split("-").map((h) => parseInt(h, 16))) : `:${esc(el.name)}:`;
          default: {
            let html = esc(el.text || "").replace(/\n/g, "<br>");
            const style = el.style || {};
            if (style.code) html = `<code>${html}</code>`;
            if (style.bold) html = `<b>${html}</b>`;
            if (style.italic) html = `<i>${html}</i>`;
            if (style.strike) html = `<s>${html}</s>`;
            return html;
          }
        }
      })
      .join("");
  }

  function block(b, where, expanded) {
    const at = { ...where, blockId: b.block_id || "" };
    switch (b.type) {
      case "section": {
        const fields = (b.fields || []).map((f) => `<div>${textObject(f)}</div>`).join("");
        return `<div class="block section"><div class="section-text">${textObject(b.text)}${fields ? `<div class="fields">${fields}</div>` : ""}</div>${b.accessory ? `<div class="accessory">${element(b.accessory, at)}</div>` : ""}</div>`;
      }
      case "header":
        return `<div class="block header">${esc(plain(b.text))}</div>`;
      case "context":
        return `<div class="block context">${(b.elements || []).map((e) => element(e, at)).join(" ")}</div>`;
      case "actions":
      case "context_actions":
        return `<div class="block actions">${(b.elements || []).map((e) => element(e, at)).join("")}</div>`;
      case "markdown":
        return `<div class="block markdown">${markdown(b.text)}</div>`;
      case "rich_text":
        return `<div class="block rich-text">${richText(b.elements)}</div>`;
      case "divider":
        return '<hr class="block divider">';
      case "image":
        return `<div class="block image">[${esc(b.alt_text || "image")}]</div>`;
      case "input":
        return input(b, where);
      case "task_card":
        return taskCard({ ...b, id: b.task_id, details: plain(b.details), output: plain(b.output) }, `${where.ts}/${b.task_id}`, expanded);
      case "plan":
        return plan({ ts: where.ts, plan_title: b.title, tasks: (b.tasks || []).map((t) => ({ ...t, id: t.task_id })) }, expanded);
      default:
        return `<div class="block unknown">&lt;${esc(b.type)} block&gt;</div>`;
    }
  }

  // An input block of a modal; its value is read back by action_id.
  function input(b, where) {
    const el = b.element || {};
    const id = `input-${esc(b.block_id)}`;
    const error = where.errors && where.errors[b.block_id];
    let control;
    if (el.type === "plain_text_input") {
      const max = el.max_length ? ` maxlength="${Number(el.max_length)}"` : "";
      control = el.multiline
        ? `<textarea id="${id}" data-input="${esc(el.action_id)}" rows="4"${max}>${esc(el.initial_value || "")}</textarea>`
        : `<input id="${id}" data-input="${esc(el.action_id)}" value="${esc(el.initial_value || "")}"${max}>`;
    } else if (el.type === "static_select" || el.type === "multi_static_select") {
      control = `<select id="${id}" data-input="${esc(el.action_id)}" ${el.type === "multi_static_select" ? 'multiple data-multiple="1"' : ""}>
        ${(el.options || []).map((o) => `<option value="${esc(o.value)}">${esc(plain(o.text))}</option>`).join("")}</select>`;
    } else if (el.type === "checkboxes" || el.type === "radio_buttons") {
      const kind = el.type === "checkboxes" ? "checkbox" : "radio";
      control = `<fieldset id="${id}" data-input="${esc(el.action_id)}" data-choices="${kind}">${(el.options || [])
        .map((o) => `<label><input type="${kind}" name="${esc(el.action_id)}" value="${esc(o.value)}"> ${textObject(o.text)}</label>`)
        .join("")}</fieldset>`;
    } else {
      control = `<span class="unknown">&lt;${esc(el.type)} input&gt;</span>`;
    }
    return `<div class="block input"><label for="${id}">${esc(plain(b.label))}${b.optional ? " <small>(optional)</small>" : ""}</label>
      ${control}${error ? `<div class="input-error" role="alert">${esc(error)}</div>` : ""}</div>`;
  }

  // --- messages ---------------------------------------------------------------------------

  const clock = (ts) => new Date(Number(ts) * 1000).toLocaleTimeString([], { hour12: false });

  function avatar(userId, isBot) {
    const name = isBot ? "Agent Kourier" : fullNameOf(userId);
    const initials = name.split(/\s+/).map((w) => w[0] || "").join("").slice(0, 2).toUpperCase();
    let hue = 0;
    for (const c of userId) hue = (hue * 31 + c.charCodeAt(0)) % 360;
    return `<div class="avatar${isBot ? " bot" : ""}" style="--hue:${hue}" aria-hidden="true">${esc(initials)}</div>`;
  }

  // The body a reader sees: streamed text and cards in order, then the blocks.
  function body(message, where, expanded) {
    const parts = [];
    const streamed = message.stream !== null && message.stream !== undefined;
    if (streamed || !(message.blocks || []).length) {
      const cards = Object.fromEntries((message.tasks || []).map((c) => [c.id, c]));
      const planMode = message.task_display_mode === "plan" || message.plan_title;
      let planShown = false;
      for (const item of message.timeline || []) {
        if (item.kind === "text") parts.push(`<div class="text">${streamed ? markdown(item.text) : mrkdwn(item.text)}</div>`);
        else if (planMode && !planShown) {
          parts.push(plan(message, expanded));
          planShown = true;
        } else if (!planMode && cards[item.task_id]) {
          parts.push(taskCard(cards[item.task_id], `${message.ts}/${item.task_id}`, expanded));
        }
      }
      if (planMode && !planShown && (message.tasks || []).length) parts.push(plan(message, expanded));
    }
    for (const b of message.blocks || []) parts.push(block(b, where, expanded));
    if (message.stream === "streaming") parts.push('<span class="cursor" aria-label="streaming">▍</span>');
    if (message.stream === "expired") parts.push('<div class="note">(stream expired)</div>');
    if (message.stopped_by) parts.push(`<div class="note">(stopped by ${esc(fullNameOf(message.stopped_by))})</div>`);
    return parts.join("");
  }

  function message(m, options) {
    const isBot = Boolean(m.bot_id);
    const where = { channel: m.channel, ts: m.ts, selections: options.selections, feedback: options.feedback };
    const tags = [];
    if (isBot) tags.push('<span class="tag">APP</span>');
    if (options.ephemeral) tags.push('<span class="tag only-you">Only visible to you</span>');
    if (m.stream === "streaming") tags.push('<span class="tag streaming">streaming…</span>');
    const replies = options.replies
      ? `<button type="button" class="replies" data-act="open-thread" data-ts="${esc(m.ts)}">${options.replies} ${options.replies === 1 ? "reply" : "replies"}</button>`
      : "";
    return `<article class="message${isBot ? " from-bot" : ""}${options.ephemeral ? " ephemeral" : ""}${options.selected ? " selected" : ""}" data-ts="${esc(m.ts)}">
      ${avatar(m.user, isBot)}
      <div class="message-main">
        <div class="message-head"><span class="author">${esc(isBot ? "Agent Kourier" : fullNameOf(m.user))}</span>${tags.join("")}
          <time title="ts ${esc(m.ts)}">${clock(m.ts)}</time>${m.edited ? '<span class="edited">(edited)</span>' : ""}</div>
        <div class="message-body">${body(m, where, options.expanded)}</div>
        ${replies}
      </div>
    </article>`;
  }

  return { esc, mrkdwn, markdown, block, message, setPeople, nameOf, fullNameOf, plain, clock };
})();
