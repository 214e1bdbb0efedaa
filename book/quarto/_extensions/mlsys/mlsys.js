// mlsys: a hover box for numbers whose origin mlsys recorded (span.mlsys-num[title]).
// The title attribute already works as the browser's tooltip; with Quarto's tippy.js
// (present on Quarto HTML pages) the same text is shown as a styled, wrapping box that
// keyboard users reach with Tab as well.
(function () {
  function enhance() {
    var spans = document.querySelectorAll("span.mlsys-num[title]");
    for (var i = 0; i < spans.length; i++) {
      var el = spans[i];
      var text = el.getAttribute("title");
      if (!text) continue;
      el.setAttribute("tabindex", "0");
      el.setAttribute("data-mlsys-source", text);
      if (typeof window.tippy === "function") {
        el.removeAttribute("title"); // one box, not the native tooltip as well
        el.setAttribute("aria-label", el.textContent + " (" + text + ")");
        window.tippy(el, {
          content: text,
          maxWidth: 440,
          delay: [150, 0],
          theme: "quarto",
          placement: "bottom-start",
        });
      }
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", enhance);
  } else {
    enhance();
  }
})();
