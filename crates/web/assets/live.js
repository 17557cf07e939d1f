// Follows a match as it is played (docs/live.md). The page shows the match so far; this reads
// the match's event stream from where the page left off and reloads the page when something
// new has been played (at most every two seconds), and once the match is over (the page is
// then its stored replay). A reader who went back to an earlier step keeps it; one at the last
// step follows the match.
(function () {
  var box = document.getElementById('kv-live');
  if (!box || !window.EventSource) return;
  var es = new EventSource(box.getAttribute('data-events'));
  var steps = Number(box.getAttribute('data-steps') || '0');
  var timer = null, loaded = Date.now();
  function following() {
    var m = /(?:^#|&)t=(\d+)/.exec(location.hash);
    return !m || Number(m[1]) >= steps - 1;
  }
  function reload(over) {
    // At the last step (or none chosen): follow the match to its new last step, and once it is
    // over to its end.
    if (following()) history.replaceState(null, '', location.pathname + location.search + (over ? '#t=end' : ''));
    location.reload();
  }
  es.onmessage = function () {
    var status = document.getElementById('kv-live-status');
    if (status) status.textContent = 'new moves: updating';
    if (!timer) timer = setTimeout(function () { reload(false); }, Math.max(0, 2000 - (Date.now() - loaded)));
  };
  es.addEventListener('end', function () {
    es.close();
    var status = document.getElementById('kv-live-status');
    if (status) status.textContent = 'the match is over: loading its replay';
    if (timer) clearTimeout(timer);
    setTimeout(function () { reload(true); }, 500);
  });
})();
