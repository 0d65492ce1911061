// `ankigen serve`: the page follows the banks. The server says when this page or the
// problems changed (a stamp, by Server-Sent Events). A deck's page then asks which
// cards it has now (/__cards: each card's item and digest), fetches the changed ones
// alone, and puts them in place: a card whose digest is the same keeps its node, its
// place and the side it shows; a changed card shows the side its former self showed.
// Any other page, or one with many changed cards, fetches itself whole.
(function () {
  "use strict";
  var page = location.pathname.replace(/^.*\//, "") || "index.html";
  var stamp = "STAMP";
  var wanted = stamp;
  var busy = false;
  var FEW = 100;  // more changed cards than this: the whole page is one request

  function json(url) {
    return fetch(url, { cache: "no-store" }).then(function (response) {
      if (!response.ok) { throw new Error(url + ": " + response.status); }
      return response.json();
    });
  }

  function element(markup) {
    var holder = document.createElement("template");
    holder.innerHTML = markup;
    return holder.content.firstElementChild;
  }

  function swap(selector, markup) {
    var now = document.querySelector(selector);
    var next = markup ? element(markup) : null;
    if (now && next) { now.replaceWith(next); }
    else if (now) { now.remove(); }
    else if (next) { document.body.insertBefore(next, document.body.firstChild); }
  }

  // The cards, in order, as [item, node made from the server's HTML or null if kept].
  function place(main, order) {
    var before = {};
    [].forEach.call(main.children, function (card) { before[card.getAttribute("data-item")] = card; });
    var same = main.children.length === order.length;
    var made = [];
    var nodes = order.map(function (entry, at) {
      var old = before[entry[0]];
      same = same && old === main.children[at];
      if (!entry[1]) { return old; }
      made.push([entry[1], old, old && old.pvShown ? { back: old.pvBack } : null]);
      return entry[1];
    });
    if (same) {  // the same cards in the same order: only the changed ones are replaced
      made.forEach(function (change) { change[1].replaceWith(change[0]); });
    } else {
      main.replaceChildren.apply(main, nodes);
    }
    made.forEach(function (change) { window.ankigenPreview.adopt(change[0], change[2]); });
  }

  // Each card's digest by its item, as the page has them now.
  function digests(main) {
    var have = {};
    [].forEach.call(main.children, function (card) {
      have[card.getAttribute("data-item")] = card.getAttribute("data-digest");
    });
    return have;
  }

  function changedCards(main) {
    return json("/__cards?page=" + encodeURIComponent(page)).then(function (now) {
      var have = digests(main);
      var changed = now.cards.filter(function (card) { return have[card[0]] !== card[1]; })
        .map(function (card) { return card[0]; });
      if (changed.length > FEW) { return wholePage(); }
      var asked = changed.length ? json("/__cards?page=" + encodeURIComponent(page) +
        "&items=" + encodeURIComponent(JSON.stringify(changed))) : Promise.resolve({ sections: {} });
      return asked.then(function (found) {
        var order = now.cards.map(function (card) {
          if (have[card[0]] === card[1]) { return [card[0], null]; }
          var markup = found.sections[card[0]];
          if (!markup) { throw new Error("changed again"); }
          return [card[0], element(markup)];
        });
        swap(".pv-problems", now.problems);
        swap(".pv-header", now.header);
        document.title = element("<title>" + now.title + "</title>").textContent;
        place(main, order);
        return now.stamp;
      });
    });
  }

  function wholePage() {
    return fetch(location.pathname, { cache: "no-store" }).then(function (response) {
      if (!response.ok) { throw new Error(response.status); }
      return response.text();
    }).then(function (text) {
      var fresh = new DOMParser().parseFromString(text, "text/html");
      var main = document.querySelector("main.pv-main");
      var freshMain = fresh.querySelector("main.pv-main");
      document.title = fresh.title;
      if (!main || !freshMain) {  // the index, or a page that became one
        document.body.innerHTML = fresh.body.innerHTML;
        return null;
      }
      var problems = fresh.querySelector(".pv-problems");
      swap(".pv-problems", problems ? problems.outerHTML : "");
      swap(".pv-header", fresh.querySelector(".pv-header").outerHTML);
      var have = digests(main);
      place(main, [].map.call(freshMain.children, function (card) {
        var item = card.getAttribute("data-item");
        var kept = have[item] === card.getAttribute("data-digest");
        return [item, kept ? null : document.importNode(card, true)];
      }));
      return null;
    });
  }

  function update() {
    if (busy) { return; }
    busy = true;
    var asked = wanted;
    var main = document.querySelector("main.pv-main");
    (main ? changedCards(main) : wholePage()).then(function (now) {
      stamp = now || asked;
      document.documentElement.setAttribute("data-pv-stamp", stamp);
    }).catch(function () {
      return wholePage().then(function () { stamp = asked; });
    }).catch(function () {
      location.reload();
    }).then(function () {
      busy = false;
      if (wanted !== stamp) { update(); }
    });
  }

  document.documentElement.setAttribute("data-pv-stamp", stamp);
  var events = new EventSource("/__events?page=" + encodeURIComponent(page));
  events.onmessage = function (event) {
    wanted = event.data;
    if (wanted !== stamp) { update(); }
  };
})();
