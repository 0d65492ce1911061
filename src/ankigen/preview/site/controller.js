// The preview's cards. A card is shown when it comes near the screen, as Anki desktop
// shows a side (ts/reviewer/index.ts): its HTML put in place, its scripts made again so
// that they run, then MathJax on it. The templates' long blocks (the script, the
// phrases) are on the page once (#pv-shared): each side names them, and gets them back
// here, instead of carrying 34 kB of them.
(function () {
  "use strict";
  var shared = JSON.parse(document.getElementById("pv-shared").textContent);

  function whole(side) {
    return side.replace(/<!--pv-shared:(\d+)-->/g, function (named, number) {
      return shared[+number];
    });
  }

  function setInnerHTML(element, markup) {
    element.innerHTML = markup;
    [].slice.call(element.getElementsByTagName("script")).forEach(function (old) {
      var fresh = document.createElement("script");
      for (var i = 0; i < old.attributes.length; i++) {
        fresh.setAttribute(old.attributes[i].name, old.attributes[i].value);
      }
      fresh.appendChild(document.createTextNode(old.innerHTML));
      old.parentNode.replaceChild(fresh, old);
    });
    var mathjax = window.MathJax;
    if (mathjax && mathjax.startup && mathjax.startup.promise) {
      mathjax.startup.promise.then(function () {
        mathjax.typesetClear([element]);
        return mathjax.typesetPromise([element]);
      });
    }
  }

  function show(card, back) {
    var flip = card.querySelector(".pv-flip");
    var side = card.querySelector(back ? "template.pv-back" : "template.pv-front");
    card.pvShown = true;
    card.pvBack = back;
    setInnerHTML(card.querySelector(".pv-qa"), whole(side.innerHTML));
    flip.textContent = flip.getAttribute(back ? "data-again" : "data-show");
  }

  var near = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (entry.isIntersecting) {
        near.unobserve(entry.target);
        if (!entry.target.pvShown) { show(entry.target, false); }
      }
    });
  }, { rootMargin: "1500px 0px" }) : null;

  // A card on the page: shown as `was` says (its side), or when it comes near.
  function adopt(card, was) {
    card.querySelector(".pv-flip").addEventListener("click", function () {
      show(card, !card.pvBack);
    });
    if (was) {
      show(card, was.back);
    } else if (near) {
      near.observe(card);
    } else {
      show(card, false);
    }
  }

  document.querySelectorAll(".pv-card").forEach(function (card) { adopt(card, null); });
  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest(".pv-night")) {
      document.body.classList.toggle("nightMode");
      document.body.classList.toggle("night_mode");
    }
  });
  window.ankigenPreview = { adopt: adopt };
})();
