// okfx viewer: relaxes the server's graph layout and lets you pan and zoom.
// Written for okfx (Apache-2.0); no third-party code. The page is complete without it:
// every node is already a link at a sensible position.
(function () {
  "use strict";

  function start() {
    var svg = document.getElementById("graph");
    if (!svg) { return; }
    var nodeEls = Array.prototype.slice.call(svg.querySelectorAll(".node"));
    var edgeEls = Array.prototype.slice.call(svg.querySelectorAll("line.edge"));
    var nodes = nodeEls.map(function (el) {
      var m = /translate\(([-0-9.e]+) ([-0-9.e]+)\)/.exec(el.getAttribute("transform") || "");
      return {
        el: el, x: m ? parseFloat(m[1]) : 0, y: m ? parseFloat(m[2]) : 0, vx: 0, vy: 0,
        fixed: el.classList.contains("root")
      };
    });
    var edges = edgeEls.map(function (el) {
      return { el: el, s: nodes[+el.getAttribute("data-s")], t: nodes[+el.getAttribute("data-t")] };
    }).filter(function (e) { return e.s && e.t; });

    relax(nodes, edges);
    draw(nodes, edges);
    fit(svg, nodes);
    var order = labelOrder(nodes, edges);
    var refresh = function () { relabel(svg); declutter(svg, order); };
    refresh();
    panZoom(svg, refresh);
    window.addEventListener("resize", refresh);
    svg.setAttribute("data-ready", "1");
  }

  // Labels keep one size on screen (13 px) whatever the zoom: the viewBox scales the
  // drawing, so the label's size in drawing units follows the scale (the larger of the
  // two, as the default preserveAspectRatio "meet" fits the box).
  function relabel(svg) {
    var v = svg.getAttribute("viewBox").split(" ").map(parseFloat);
    var width = svg.clientWidth || 1, height = svg.clientHeight || 1;
    var scale = Math.max(v[2] / width, v[3] / height);
    svg.style.setProperty("--label", (13 * scale).toFixed(2) + "px");
  }

  // Which labels to show first when they would overlap: the graph's root, then the
  // best linked nodes, then page order.
  function labelOrder(nodes, edges) {
    var degree = nodes.map(function () { return 0; });
    var at = new Map(nodes.map(function (p, i) { return [p, i]; }));
    edges.forEach(function (e) { degree[at.get(e.s)] += 1; degree[at.get(e.t)] += 1; });
    return nodes.map(function (p, i) { return i; }).sort(function (a, b) {
      return (nodes[b].fixed - nodes[a].fixed) || (degree[b] - degree[a]) || (a - b);
    }).map(function (i) { return nodes[i]; });
  }

  // A label that would overlap one already shown, or another node's circle (viewer QA:
  // a dot sat in "Anumāna — Inf●rential"), is hidden ("quiet": it shows while the
  // pointer or the keyboard focus is on its node); zooming in makes room for more. A label
  // running past the right edge of the box (a phone's width) goes to the left of its node
  // when it fits there, else it waits too.
  function declutter(svg, order) {
    var v = svg.getAttribute("viewBox").split(" ").map(parseFloat);
    var right = v[0] + v[2], left = v[0];
    var circles = order.map(function (p) {
      var c = p.el.querySelector("circle");
      var r = c ? parseFloat(c.getAttribute("r")) || 6 : 6;
      return { p: p, x: p.x - r, y: p.y - r, w: 2 * r, h: 2 * r };
    });
    function meets(a, o) {
      return a.x < o.x + o.w && o.x < a.x + a.w && a.y < o.y + o.h && o.y < a.y + a.h;
    }
    var shown = [];
    order.forEach(function (p) {
      var text = p.el.querySelector("text");
      if (!text) { return; }
      text.setAttribute("x", "18");
      text.removeAttribute("text-anchor");
      var b = text.getBBox();
      var box = { x: p.x + b.x, y: p.y + b.y, w: b.width, h: b.height };
      if (box.x + box.w > right && p.x - 18 - b.width >= left) {
        text.setAttribute("x", "-18");
        text.setAttribute("text-anchor", "end");
        box.x = p.x - 18 - b.width;
      }
      var clash = box.x + box.w > right || shown.some(function (o) { return meets(box, o); }) ||
        circles.some(function (c) { return c.p !== p && meets(box, c); });
      p.el.classList.toggle("quiet", clash);
      if (!clash) { shown.push(box); }
    });
  }

  function relax(nodes, edges) {
    var n = nodes.length;
    var rounds = n > 250 ? 60 : n > 100 ? 120 : 220;
    var want = 80;
    for (var round = 0; round < rounds; round++) {
      var heat = 1 - round / rounds;
      for (var i = 0; i < n; i++) {
        var a = nodes[i];
        for (var j = i + 1; j < n; j++) {
          var b = nodes[j];
          var dx = a.x - b.x, dy = a.y - b.y;
          var d2 = dx * dx + dy * dy + 0.01;
          if (d2 > 250000) { continue; }
          var push = 1400 / d2;
          a.vx += dx * push; a.vy += dy * push;
          b.vx -= dx * push; b.vy -= dy * push;
        }
      }
      edges.forEach(function (e) {
        var dx = e.t.x - e.s.x, dy = e.t.y - e.s.y;
        var d = Math.sqrt(dx * dx + dy * dy) + 0.01;
        var pull = (d - want) / d * 0.04;
        e.s.vx += dx * pull; e.s.vy += dy * pull;
        e.t.vx -= dx * pull; e.t.vy -= dy * pull;
      });
      nodes.forEach(function (p) {
        p.vx -= p.x * 0.002; p.vy -= p.y * 0.002;  // a weak pull to the centre
        if (!p.fixed) {
          var cap = 30 * heat + 1;
          p.x += Math.max(-cap, Math.min(cap, p.vx));
          p.y += Math.max(-cap, Math.min(cap, p.vy));
        }
        p.vx *= 0.5; p.vy *= 0.5;
      });
    }
  }

  function draw(nodes, edges) {
    nodes.forEach(function (p) {
      p.el.setAttribute("transform", "translate(" + p.x.toFixed(1) + " " + p.y.toFixed(1) + ")");
    });
    edges.forEach(function (e) {
      e.el.setAttribute("x1", e.s.x.toFixed(1)); e.el.setAttribute("y1", e.s.y.toFixed(1));
      e.el.setAttribute("x2", e.t.x.toFixed(1)); e.el.setAttribute("y2", e.t.y.toFixed(1));
    });
  }

  function fit(svg, nodes) {
    if (!nodes.length) { return; }
    var minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity;
    nodes.forEach(function (p) {
      minX = Math.min(minX, p.x); minY = Math.min(minY, p.y);
      maxX = Math.max(maxX, p.x); maxY = Math.max(maxY, p.y);
    });
    var pad = 90;
    svg.setAttribute("viewBox", [minX - pad, minY - pad, maxX - minX + 2 * pad + 120, maxY - minY + 2 * pad].join(" "));
  }

  function panZoom(svg, zoomed) {
    var dragging = null;
    function box() { return svg.getAttribute("viewBox").split(" ").map(parseFloat); }
    svg.addEventListener("wheel", function (event) {
      // Ctrl (or a pinch, which browsers send with it) zooms; the wheel alone scrolls the
      // page, past a graph that fills the window (viewer QA).
      if (!event.ctrlKey && !event.metaKey) { return; }
      event.preventDefault();
      var v = box();
      var k = event.deltaY > 0 ? 1.15 : 1 / 1.15;
      var cx = v[0] + v[2] / 2, cy = v[1] + v[3] / 2;
      svg.setAttribute("viewBox", [cx - v[2] * k / 2, cy - v[3] * k / 2, v[2] * k, v[3] * k].join(" "));
      zoomed();
    }, { passive: false });
    svg.addEventListener("pointerdown", function (event) {
      if (event.target.closest && event.target.closest(".node")) { return; }
      dragging = { x: event.clientX, y: event.clientY, v: box() };
    });
    window.addEventListener("pointermove", function (event) {
      if (!dragging) { return; }
      var scale = dragging.v[2] / svg.clientWidth;
      var v = dragging.v;
      svg.setAttribute("viewBox", [v[0] - (event.clientX - dragging.x) * scale, v[1] - (event.clientY - dragging.y) * scale, v[2], v[3]].join(" "));
    });
    window.addEventListener("pointerup", function () { dragging = null; });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
