(function () {
  "use strict";
  // The card on an adopted deck's own note type (apkg/kept.py): before card.js reads the
  // choices, mark the correct ones from the note type's answer field (`.ag-key`), in its
  // own words: bits by position (1 0 0 1), choice numbers (2, 1 3), letters by position
  // (B, A C), or the correct choice's text. The note type is shared by decks of several languages, so the text
  // gives the card's direction.
  var scripts = document.getElementsByTagName("script");
  var me = document.currentScript || scripts[scripts.length - 1];
  var root = null;
  for (var node = me && me.previousElementSibling; node; node = node.previousElementSibling) {
    if (node.classList && node.classList.contains("ag-card")) { root = node; break; }
  }
  var key = root && root.querySelector(".ag-key");
  if (!key || root.getAttribute("data-ag-ready")) { return; }
  var format = key.getAttribute("data-format");
  var words = key.textContent.replace(/\s+/g, " ").trim();
  var tokens = words.split(/[ ,]+/);
  var letters = words.toUpperCase().split(/[ ,]+/);
  function plain(li) {
    var copy = li.cloneNode(true);
    var whys = copy.querySelectorAll(".ag-why");
    for (var w = 0; w < whys.length; w++) { whys[w].parentNode.removeChild(whys[w]); }
    return { text: copy.textContent.replace(/\s+/g, " ").trim(), html: copy.innerHTML };
  }
  var rows = root.querySelectorAll(".ag-static li[data-choice]");
  var correct = [];
  for (var r = 0; r < rows.length; r++) {
    var n = parseInt(rows[r].getAttribute("data-choice"), 10);
    var choice = plain(rows[r]);
    var right = format === "bits" ? tokens[n - 1] === "1" :
      format === "numbers" ? tokens.indexOf(String(n)) >= 0 :
      format === "letters" ? letters.indexOf(String.fromCharCode(64 + n)) >= 0 :
      choice.text === words;
    rows[r].setAttribute("data-correct", right ? "true" : "false");
    if (right) { correct.push(choice.html); }
  }
  // the question's own direction (`dir="auto"` on it): the card's would skip it
  var question = root.querySelector(".ag-question");
  if (root.getAttribute("dir") === "auto" && question) {
    root.setAttribute("dir", window.getComputedStyle(question).direction === "rtl" ? "rtl" : "ltr");
  }
  var answer = root.querySelector(".ag-answer-text");
  if (answer && !answer.innerHTML.trim()) { answer.innerHTML = correct.join("<br>"); }
})();
