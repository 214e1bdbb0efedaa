// mlsys: a hover box for numbers whose origin mlsys recorded (span.mlsys-num[title]).
// The span's title is one short line (what the number is, where it comes from); its
// data-detail holds the whole text and data-links the addresses of the sources. With
// Quarto's tippy.js (present on Quarto HTML pages) the box shows the short line, the
// sources as links and a "Details" toggle for the whole text; it opens on hover, focus
// (Tab) or tap, stays open while the pointer is in it (so a link can be clicked), and
// sits above the line of the number (below it only when there is no room above), so it
// never covers the sentence it explains. Without tippy the browser's own tooltip shows
// the short line.
(function () {
  function host(url) {
    try {
      return new URL(url).hostname.replace(/^www\./, "");
    } catch (e) {
      return url;
    }
  }

  function box(head, detail, links) {
    var root = document.createElement("div");
    root.className = "mlsys-tip";
    var first = document.createElement("div");
    first.className = "mlsys-tip-head";
    first.textContent = head;
    root.appendChild(first);
    if (links.length) {
      var list = document.createElement("div");
      list.className = "mlsys-tip-links";
      list.appendChild(document.createTextNode(links.length > 1 ? "Sources: " : "Source: "));
      for (var i = 0; i < links.length; i++) {
        if (i) list.appendChild(document.createTextNode(" · "));
        var a = document.createElement("a");
        a.href = links[i];
        a.textContent = host(links[i]);
        a.target = "_blank";
        a.rel = "noopener";
        list.appendChild(a);
      }
      root.appendChild(list);
    }
    if (detail && detail !== head) {
      var more = document.createElement("details");
      var summary = document.createElement("summary");
      summary.textContent = "Details";
      more.appendChild(summary);
      var body = document.createElement("div");
      body.className = "mlsys-tip-detail";
      body.textContent = detail;
      more.appendChild(body);
      root.appendChild(more);
    }
    return root;
  }

  function enhance() {
    var spans = document.querySelectorAll("span.mlsys-num[title]");
    for (var i = 0; i < spans.length; i++) {
      var el = spans[i];
      var head = el.getAttribute("title");
      if (!head) continue;
      var detail = el.getAttribute("data-detail") || "";
      var links = (el.getAttribute("data-links") || "").split(/\s+/).filter(Boolean);
      el.setAttribute("tabindex", "0");
      el.setAttribute("data-mlsys-source", head);
      if (typeof window.tippy === "function") {
        el.removeAttribute("title"); // one box, not the native tooltip as well
        el.setAttribute("aria-label", el.textContent + " (" + head + ")");
        window.tippy(el, {
          content: box(head, detail, links),
          allowHTML: false,
          interactive: true,
          appendTo: document.body,
          maxWidth: 420,
          delay: [150, 80],
          theme: "quarto",
          placement: "top-start",
          offset: [0, 6],
          popperOptions: {
            modifiers: [{ name: "flip", options: { fallbackPlacements: ["bottom-start"] } }],
          },
          trigger: "mouseenter focus click",
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
