// okfx viewer: keyboard navigation. Written for okfx (Apache-2.0); no third-party code.
// "/" focuses the search box; "j" / "k" move through the rows of a list and Enter opens
// the current one; Escape leaves a text field.
(function () {
  "use strict";
  var current = -1;

  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll(".row a.primary"));
  }

  function typing(target) {
    var tag = target && target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (target && target.isContentEditable);
  }

  function move(step) {
    var links = rows();
    if (!links.length) { return; }
    current = Math.max(0, Math.min(links.length - 1, current + step));
    links.forEach(function (link, i) {
      var row = link.closest(".row");
      if (row) { row.classList.toggle("kbd-current", i === current); }
    });
    links[current].focus();
  }

  // A heading's id is "h-" + GitHub's id for it (so bundle text cannot clobber the
  // page's own ids); a fragment copied from GitHub or from the author's docs
  // ("#second-part") lands on that heading too.
  function land() {
    var wanted;
    try { wanted = decodeURIComponent(window.location.hash.slice(1)); } catch (e) { return; }
    if (!wanted || document.getElementById(wanted)) { return; }
    var heading = document.getElementById("h-" + wanted.toLowerCase());
    if (heading) { heading.scrollIntoView(); }
  }
  // A page shown again by Back or Forward keeps what its forms were changed to before
  // they were sent; the list shows the address's filters, so the forms must too (viewer
  // QA: Back showed every row under a tag still picked). reset() restores what the
  // server wrote.
  window.addEventListener("pageshow", function () {
    var forms = document.querySelectorAll("form.facet-form, form.search-form");
    Array.prototype.forEach.call(forms, function (form) {
      form.reset();
      Array.prototype.forEach.call(form.elements, function (field) { field.disabled = false; });
    });
  });
  // A filter left empty stays out of the address people copy and share (viewer QA:
  // "?type=pattern&tag=&tier=&status=&stale="): disabled on submit, so not sent.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches || !form.matches("form.facet-form, form.search-form")) { return; }
    Array.prototype.forEach.call(form.elements, function (field) {
      if (field.name && field.name !== "q" && field.name !== "pattern" && field.value === "") {
        field.disabled = true;
      }
    });
  });
  window.addEventListener("hashchange", land);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", land);
  } else {
    land();
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (typing(event.target)) {
      if (event.key === "Escape") { event.target.blur(); }
      return;
    }
    if (event.key === "/") {
      var box = document.getElementById("quick-search");
      if (box) { event.preventDefault(); box.focus(); box.select(); }
    } else if (event.key === "j") {
      move(1);
    } else if (event.key === "k") {
      move(-1);
    }
  });
})();
