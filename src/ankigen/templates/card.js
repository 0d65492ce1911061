(function () {
  "use strict";
  // One namespace for the whole page, under a symbol: no named globals. It holds
  // the fallback state store and the card that the keyboard handler acts on.
  var NS = typeof Symbol === "function" ? Symbol.for("ankigen") : "__ankigen";
  var shared = window[NS] || (window[NS] = { states: {}, current: null, keys: false });
  var STATE_PREFIX = "ankigen:v1:";
  var BACK_REUSE_MS = 60 * 1000;

  var scripts = document.getElementsByTagName("script");
  var me = document.currentScript || scripts[scripts.length - 1];
  var root = null;
  for (var node = me && me.previousElementSibling; node; node = node.previousElementSibling) {
    if (node.classList && node.classList.contains("ag-card")) { root = node; break; }
  }
  if (!root || root.getAttribute("data-ag-ready")) { return; }
  root.setAttribute("data-ag-ready", "1");
  if (root.querySelector(".ag-retired")) { root.setAttribute("data-retired", "true"); }
  var isBack = root.classList.contains("ag-back");

  var source = root.querySelectorAll(".ag-static li[data-choice]");
  if (!source.length) { return; }
  // A choice's `why` travels inside its <li>; the front must never show it.
  function whyOf(li) {
    var why = li.querySelector(".ag-why");
    return why ? why.innerHTML : "";
  }
  function choiceHtml(li) {
    if (!li.querySelector(".ag-why")) { return li.innerHTML; }
    var copy = li.cloneNode(true);
    var whys = copy.querySelectorAll(".ag-why");
    for (var w = 0; w < whys.length; w++) { whys[w].parentNode.removeChild(whys[w]); }
    return copy.innerHTML;
  }
  var choices = [];
  for (var i = 0; i < source.length; i++) {
    choices.push({
      number: parseInt(source[i].getAttribute("data-choice"), 10),
      correct: source[i].getAttribute("data-correct") === "true",
      html: choiceHtml(source[i]),
      why: whyOf(source[i])
    });
  }
  var correctCount = choices.filter(function (c) { return c.correct; }).length;
  var multi = correctCount > 1;
  // data-shuffle holds the Shuffle field: space-separated flags, "shuffle" and "recall"
  function hasFlag(flag) {
    return (" " + (root.getAttribute("data-shuffle") || "") + " ").indexOf(" " + flag + " ") >= 0;
  }
  var shuffle = hasFlag("shuffle");
  var recall = hasFlag("recall");
  if (recall) { root.setAttribute("data-recall", "true"); }

  function cardKey() {
    var question = root.querySelector(".ag-question");
    var text = (question ? question.textContent : "") + "\u001f" +
      choices.map(function (c) { return c.number + ":" + c.html; }).join("\u001f");
    var hash = 0x811c9dc5;
    for (var j = 0; j < text.length; j++) {
      hash ^= text.charCodeAt(j);
      hash = Math.imul ? Math.imul(hash, 0x01000193) : (hash * 0x01000193) | 0;
    }
    return STATE_PREFIX + (root.getAttribute("lang") || "") + ":" +
      (root.getAttribute("data-item") || "") + ":" + (hash >>> 0).toString(36);
  }
  var key = cardKey();

  function save(state) {
    shared.states[key] = state;
    try { window.sessionStorage.setItem(key, JSON.stringify(state)); } catch (e) { /* fallback only */ }
  }
  function load() {
    var state = null;
    try {
      var raw = window.sessionStorage.getItem(key);
      if (raw) { state = JSON.parse(raw); }
    } catch (e) { state = null; }
    return state || shared.states[key] || null;
  }
  function validOrder(order) {
    if (!order || order.length !== choices.length) { return false; }
    var seen = {};
    for (var j = 0; j < order.length; j++) {
      var found = choices.some(function (c) { return c.number === order[j]; });
      if (!found || seen[order[j]]) { return false; }
      seen[order[j]] = true;
    }
    return true;
  }

  function randomBelow(n) {
    // unbiased: rejection sampling on crypto values, Math.random otherwise
    var cryptoObj = window.crypto || window.msCrypto;
    if (cryptoObj && cryptoObj.getRandomValues) {
      var limit = Math.floor(4294967296 / n) * n;
      var buf = new Uint32Array(1);
      do { cryptoObj.getRandomValues(buf); } while (buf[0] >= limit);
      return buf[0] % n;
    }
    return Math.floor(Math.random() * n);
  }
  function shuffled(list) {
    var out = list.slice();
    for (var j = out.length - 1; j > 0; j--) {
      var k = randomBelow(j + 1);
      var tmp = out[j]; out[j] = out[k]; out[k] = tmp;
    }
    return out;
  }
  function byNumber(n) {
    for (var j = 0; j < choices.length; j++) { if (choices[j].number === n) { return choices[j]; } }
    return null;
  }
  function text(k) {
    var proto = root.querySelector('.ag-l10n [data-k="' + k + '"]');
    return proto ? proto.cloneNode(true) : document.createTextNode(k);
  }

  // MathJax typesets the page before or after this script, depending on the client; the
  // nodes made here are new either way. Queued on MathJax's own promise so typesets never
  // overlap, and skipped where there is no MathJax 3.
  function typeset(element) {
    var mj = window.MathJax;
    if (!mj || typeof mj.typesetPromise !== "function") { return; }
    var ready = mj.startup && mj.startup.promise ? mj.startup.promise : Promise.resolve();
    var done = ready.then(function () { return mj.typesetPromise([element]); })
      .catch(function () { /* a formula MathJax cannot parse stays as its source */ });
    if (mj.startup && mj.startup.promise) { mj.startup.promise = done; }
  }
  // Recall first: the choices wait behind a button until the learner has an answer in mind.
  function setUpRecall(card) {
    var hint = root.querySelector(".ag-hint");
    var hintShown = hint && !hint.hidden;
    if (hint) { hint.hidden = true; }
    list.hidden = true;
    var reveal = document.createElement("button");
    reveal.type = "button";
    reveal.className = "ag-reveal tappable";
    reveal.setAttribute("aria-expanded", "false");
    reveal.appendChild(text("show_choices"));
    list.parentNode.insertBefore(reveal, list);
    var show = function () {
      if (!list.hidden) { return false; }
      list.hidden = false;
      if (hint && hintShown) { hint.hidden = false; }
      reveal.setAttribute("aria-expanded", "true");
      reveal.hidden = true;
      typeset(list);
      return true;
    };
    reveal.addEventListener("click", function (event) {
      event.preventDefault();
      event.stopPropagation();
      show();
      var first = list.querySelector("button.ag-choice");
      if (first) { first.focus(); }
    });
    // the arrow keys and x reveal first, so the keyboard never picks what is not shown
    var move = card.move;
    var toggle = card.toggle;
    card.move = function (step) { if (!show()) { move(step); } };
    card.toggle = function () { if (!show()) { toggle(); } };
  }
  function gradeHint(verdict) {
    var line = document.createElement("p");
    line.className = "ag-grade-hint";
    line.appendChild(text("grade_again"));
    verdict.parentNode.insertBefore(line, verdict.nextSibling);
  }

  var list = root.querySelector(".ag-choices");
  var staticList = root.querySelector(".ag-static");
  root.classList.add("ag-js");

  if (!isBack) {
    var order = shuffle ? shuffled(choices.map(function (c) { return c.number; }))
                        : choices.map(function (c) { return c.number; });
    var state = { order: order, picked: [], front: Date.now(), back: 0 };
    save(state);
    list.setAttribute("role", multi ? "group" : "radiogroup");
    var question = root.querySelector(".ag-question");
    if (question) {
      question.id = "ag-q-" + (root.getAttribute("data-item") || "item");
      list.setAttribute("aria-labelledby", question.id);
    }
    var buttons = [];
    order.forEach(function (n) {
      var choice = byNumber(n);
      var button = document.createElement("button");
      button.type = "button";
      button.className = "ag-choice tappable";
      button.setAttribute("role", multi ? "checkbox" : "radio");
      button.setAttribute("aria-checked", "false");
      button.setAttribute("data-choice", String(n));
      var marker = document.createElement("span");
      marker.className = "ag-marker";
      marker.setAttribute("aria-hidden", "true");
      var label = document.createElement("span");
      label.className = "ag-text";
      label.dir = "auto";
      label.innerHTML = choice.html;
      button.appendChild(marker);
      button.appendChild(label);
      button.addEventListener("click", function (event) {
        event.preventDefault();
        event.stopPropagation();
        pick(n);
      });
      buttons.push(button);
      list.appendChild(button);
    });
    var pick = function (n) {
      var picked = state.picked.slice();
      var at = picked.indexOf(n);
      if (multi) {
        if (at >= 0) { picked.splice(at, 1); } else { picked.push(n); }
      } else {
        picked = [n];
      }
      state.picked = picked;
      save(state);
      buttons.forEach(function (b) {
        var on = picked.indexOf(parseInt(b.getAttribute("data-choice"), 10)) >= 0;
        b.setAttribute("aria-checked", on ? "true" : "false");
        b.setAttribute("data-picked", on ? "true" : "false");
      });
    };
    var move = function (step) {
      var at = buttons.indexOf(document.activeElement);
      var next = at < 0 ? (step > 0 ? 0 : buttons.length - 1)
                        : (at + step + buttons.length) % buttons.length;
      buttons[next].focus();
      if (!multi) { pick(parseInt(buttons[next].getAttribute("data-choice"), 10)); }
    };
    var toggleFocused = function () {
      var at = buttons.indexOf(document.activeElement);
      var button = buttons[at < 0 ? 0 : at];
      button.focus();
      pick(parseInt(button.getAttribute("data-choice"), 10));
    };
    shared.current = { root: root, move: move, toggle: toggleFocused };
    if (multi) {
      var hint = root.querySelector(".ag-hint");
      if (hint) { hint.hidden = false; }
    }
    staticList.hidden = true;
    list.hidden = false;
    if (recall) { setUpRecall(shared.current); }
    typeset(root);

    if (!shared.keys) {
      shared.keys = true;
      document.addEventListener("keydown", function (event) {
        var card = shared.current;
        if (!card || !document.body.contains(card.root) || event.ctrlKey || event.metaKey || event.altKey) {
          return;
        }
        var target = event.target;
        if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) {
          return;
        }
        var rtl = card.root.getAttribute("dir") === "rtl";
        var k = event.key;
        if (k === "ArrowDown" || k === (rtl ? "ArrowLeft" : "ArrowRight")) { card.move(1); }
        else if (k === "ArrowUp" || k === (rtl ? "ArrowRight" : "ArrowLeft")) { card.move(-1); }
        else if (k === "x" || k === "X") { card.toggle(); }
        else { return; }
        event.preventDefault();
        event.stopPropagation();
      }, true);
    }
    return;
  }

  // The back: this review's order and picks when the front left them, else the author's order.
  shared.current = null;
  var saved = load();
  var now = Date.now();
  if (saved && (!validOrder(saved.order) || (saved.back && now - saved.back > BACK_REUSE_MS))) {
    saved = null;  // another card's layout, or an earlier review whose back was already shown
  }
  if (saved && !saved.back) { saved.back = now; save(saved); }
  var answered = !!(saved && saved.picked && saved.picked.length);
  var picks = answered ? saved.picked : [];
  var shownOrder = saved ? saved.order : choices.map(function (c) { return c.number; });

  var ol = document.createElement("ol");
  ol.className = "ag-marked";
  shownOrder.forEach(function (n) {
    var choice = byNumber(n);
    var picked = picks.indexOf(n) >= 0;
    var li = document.createElement("li");
    li.className = "ag-choice";
    li.setAttribute("data-choice", String(n));
    li.setAttribute("data-correct", choice.correct ? "true" : "false");
    li.setAttribute("data-picked", picked ? "true" : "false");
    var mark = document.createElement("span");
    mark.className = "ag-mark";
    mark.setAttribute("aria-hidden", "true");
    mark.textContent = choice.correct ? "\u2713" : (picked ? "\u2717" : "");
    var label = document.createElement("span");
    label.className = "ag-text";
    label.dir = "auto";
    label.innerHTML = choice.html;
    var status = document.createElement("span");
    status.className = "ag-status";
    var words = [];
    if (choice.correct) { words.push("correct_answer"); }
    if (picked) { words.push("your_answer"); }
    if (choice.correct && !picked && multi && answered) { words.push("missed"); }
    words.forEach(function (w, index) {
      if (index) { status.appendChild(document.createTextNode(" \u00b7 ")); }
      status.appendChild(text(w));
    });
    li.appendChild(mark);
    li.appendChild(label);
    if (words.length) { li.appendChild(status); }
    if (choice.why) {
      var why = document.createElement("div");
      why.className = "ag-why";
      why.innerHTML = choice.why;
      li.appendChild(why);
    }
    ol.appendChild(li);
  });
  list.appendChild(ol);
  staticList.hidden = true;
  list.hidden = false;

  var verdict = root.querySelector(".ag-verdict");
  if (verdict && saved) {
    var right = 0;
    var wrong = 0;
    picks.forEach(function (n) { if (byNumber(n).correct) { right++; } else { wrong++; } });
    var outcome = !answered ? "verdict_none"
      : (right === correctCount && wrong === 0) ? "verdict_correct"
      : (right > 0 && multi) ? "verdict_partial" : "verdict_incorrect";
    var symbol = { verdict_correct: "\u2713 ", verdict_partial: "\u25d1 ", verdict_incorrect: "\u2717 ", verdict_none: "" }[outcome];
    verdict.setAttribute("data-verdict", outcome.replace("verdict_", ""));
    verdict.appendChild(document.createTextNode(symbol));
    verdict.appendChild(text(outcome));
    verdict.hidden = false;
    if (outcome === "verdict_incorrect" || outcome === "verdict_partial") { gradeHint(verdict); }
  }
  typeset(root);
})();
