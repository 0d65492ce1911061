// Anki's own MathJax configuration (aqt/data/web/js/mathjax.js in Anki 26.9), with the
// path to MathJax beside the page; tests/test_preview.py checks that the two agree.
window.MathJax = {
  tex: {
    displayMath: [["\\[", "\\]"]],
    processEscapes: false,
    processEnvironments: false,
    processRefs: false,
    packages: { "[+]": ["noerrors", "mathtools"], "[-]": ["textmacros"] },
  },
  loader: { load: ["[tex]/noerrors", "[tex]/mathtools"], paths: { mathjax: "_mathjax" } },
  startup: { typeset: false },
};
