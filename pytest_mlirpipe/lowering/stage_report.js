// Expand or collapse the stages; open the stage a link (#stage-N) points at.
(function () {
  function stages() { return document.querySelectorAll("details.stage"); }
  document.addEventListener("click", function (event) {
    var action = event.target.getAttribute && event.target.getAttribute("data-action");
    if (action === "open-changed") {
      stages().forEach(function (d) { d.open = !d.classList.contains("unchanged"); });
    } else if (action === "close-all") {
      stages().forEach(function (d) { d.open = false; });
    }
  });
  function openTarget() {
    var target = location.hash && document.getElementById(location.hash.slice(1));
    if (target && target.tagName === "DETAILS") { target.open = true; target.scrollIntoView(); }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
