// tarry dashboard: keep the open page current, and ask before destructive forms.
// The page works without this script; with it, the part marked data-live refreshes.
(function () {
  "use strict";
  var PERIOD_MS = 5000;

  function busy(region) {
    var active = document.activeElement;
    return document.hidden || (active && active !== document.body && region.contains(active));
  }

  function say(text) {
    var state = document.getElementById("live-state");
    if (state) { state.textContent = text; }
  }

  function refresh(region) {
    if (busy(region)) { return; }
    // A page shown after a refused form (its address is the form's action) names its own.
    var url = region.getAttribute("data-live-url") || window.location.href;
    fetch(url, {headers: {"X-Tarry-Live": "1"}, credentials: "same-origin", redirect: "manual"})
      .then(function (response) {
        if (response.type === "opaqueredirect") { throw new Error("signed out: reload the page"); }
        if (!response.ok) { throw new Error("the server answered " + response.status); }
        return response.text();
      })
      .then(function (html) {
        region.innerHTML = html;
        say("updated " + new Date().toLocaleTimeString());
      })
      .catch(function (error) { say("not updated: " + (error.message || "the server did not answer")); });
  }

  function confirmForms() {
    document.addEventListener("submit", function (event) {
      var message = event.target.getAttribute("data-confirm");
      if (message && !window.confirm(message)) { event.preventDefault(); }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    confirmForms();
    var region = document.querySelector("[data-live]");
    if (region) {
      say("updates every " + PERIOD_MS / 1000 + " s");
      window.setInterval(function () { refresh(region); }, PERIOD_MS);
    }
  });
}());
