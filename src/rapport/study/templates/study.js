// The chat page: send a message without reloading, then follow the session's events
// (stored messages, the reply as it is generated, and state) until the assistant has
// replied. Works without it too. A reply being generated is shown as plain text only; the
// stored reply replaces it, rendered as sanitized HTML by the server.
(function () {
  "use strict";
  var chat = document.getElementById("chat");
  var form = document.getElementById("send");
  if (!chat) { return; }
  var status = document.getElementById("status");
  var button = document.getElementById("send-button");
  var after = parseInt(chat.dataset.after, 10);
  var source = null;
  var draft = null;
  var draftSeq = null;
  var draftText = "";
  var problem = "";
  var retry = document.getElementById("retry");

  function dropDraft() {
    if (draft) { draft.parentNode.removeChild(draft); }
    draft = null;
    draftSeq = null;
    draftText = "";
  }

  function grow(d) {
    if (document.getElementById("m" + d.seq)) { return; }
    if (!draft || draftSeq !== d.seq) {
      dropDraft();
      draft = document.createElement("li");
      draft.id = "draft";
      draft.className = "msg agent draft";
      draft.setAttribute("aria-busy", "true");
      var who = document.createElement("span");
      who.className = "who";
      who.textContent = "Assistant";
      var body = document.createElement("div");
      body.className = "body plain";
      draft.appendChild(who);
      draft.appendChild(body);
      chat.appendChild(draft);
      draftSeq = d.seq;
    }
    draftText = draftText.slice(0, d.offset) + d.text;
    draft.lastChild.textContent = draftText; // text only: never parsed as HTML
  }

  function add(m) {
    if (m.speaker === "agent") { dropDraft(); }
    if (document.getElementById("m" + m.seq)) { return; }
    var li = document.createElement("li");
    li.id = "m" + m.seq;
    li.className = "msg " + m.speaker;
    var who = document.createElement("span");
    who.className = "who";
    who.textContent = m.speaker === "user" ? "You" : "Assistant";
    var body = document.createElement("div");
    if (m.speaker === "agent") {
      body.className = "body";
      body.innerHTML = m.html; // sanitized on the server (markdown-it + nh3)
    } else {
      body.className = "body plain";
      body.textContent = m.text;
    }
    li.appendChild(who);
    li.appendChild(body);
    chat.appendChild(li);
    after = Math.max(after, m.seq);
  }

  function setState(state) {
    chat.dataset.state = state;
    if (state === "thinking") {
      status.textContent = "The assistant is replying…";
      if (button) { button.disabled = true; }
    } else if (state === "listening") {
      status.textContent = "";
      if (button) { button.disabled = false; }
    } else if (state === "survey") {
      window.location.assign(chat.dataset.survey);
    } else if (state === "failed") {
      dropDraft();
      status.textContent = "The assistant could not reply (" + problem + "). " +
        "Your message is saved: try again, or end the session.";
      if (button) { button.disabled = true; }
    } else if (state === "error") {
      dropDraft();
      status.textContent = "This session stopped on an error; go on with the next one.";
      if (button) { button.disabled = true; }
    }
    if (retry) { retry.hidden = state !== "failed"; }
  }

  // POST a form as the server's JSON API; `done` gets the answer, `failed` an Error.
  function post(target, done, failed) {
    fetch(target.action, {
      method: "POST",
      headers: { "Accept": "application/json" },
      body: new URLSearchParams(new FormData(target)),
      credentials: "same-origin"
    }).then(function (r) {
      return r.json().then(function (body) { return { ok: r.ok, body: body }; });
    }).then(function (res) {
      if (!res.ok) { throw new Error(res.body.error || "not sent"); }
      done(res.body);
    }).catch(failed);
  }

  function follow() {
    if (source) { source.close(); }
    source = new EventSource(chat.dataset.events + "?after=" + after);
    source.addEventListener("message", function (e) { add(JSON.parse(e.data)); });
    source.addEventListener("delta", function (e) { grow(JSON.parse(e.data)); });
    source.addEventListener("problem", function (e) { problem = JSON.parse(e.data); });
    source.addEventListener("state", function (e) {
      var state = JSON.parse(e.data);
      setState(state);
      if (state !== "thinking") { source.close(); source = null; }
    });
  }

  if (chat.dataset.state === "thinking") { follow(); }
  if (retry) {
    retry.addEventListener("submit", function (e) {
      e.preventDefault();
      retry.hidden = true;
      status.textContent = "Trying again…";
      post(retry, function () { setState("thinking"); follow(); }, function (err) {
        status.textContent = "Could not try again: " + err.message + ". Reload the page.";
      });
    });
  }
  if (!form) { return; }
  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var text = form.elements.text.value.trim();
    if (!text || button.disabled) { return; }
    button.disabled = true;
    status.textContent = "Sending…";
    post(form, function (body) {
      add({ seq: body.stored, speaker: "user", text: text });
      form.elements.text.value = "";
      setState("thinking");
      follow();
    }, function (err) {
      status.textContent = "Not sent: " + err.message + ". Your text is still in the box.";
      button.disabled = false;
    });
  });
  form.elements.text.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { form.requestSubmit(); }
  });
})();
