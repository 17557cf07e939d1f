// A seat played by a person (docs/human.md): follows the seat's events, shows what the
// referee sent and what is awaited, and sends the person's replies, typed or built by the
// game's controls (the Geister board, the Negotiate and Conquer / Religion War targets).
(function () {
  var desk = document.getElementById('hs-desk');
  if (!desk) return;
  var game = desk.getAttribute('data-game');
  var st = { messages: [], sent: [], until: null, over: null, drawn: -1, choices: null };
  var $ = function (id) { return document.getElementById(id); };

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function last() {
    return st.messages.length ? st.messages[st.messages.length - 1].text : '';
  }

  function send(text) {
    $('hs-refused').textContent = '';
    fetch(desk.getAttribute('data-reply'), {
      method: 'POST', body: text, headers: { 'content-type': 'text/plain; charset=utf-8' }
    }).then(function (r) {
      return r.json().then(function (b) {
        if (r.ok) { $('hs-reply').value = ''; return; }
        $('hs-refused').textContent = 'not sent: ' + (b.error || r.status);
      }, function () { $('hs-refused').textContent = 'not sent: ' + r.status; });
    }, function (e) { $('hs-refused').textContent = 'not sent: ' + e; });
  }

  $('hs-form').addEventListener('submit', function (ev) {
    ev.preventDefault();
    send($('hs-reply').value);
  });

  function time(ms) { return new Date(ms).toLocaleTimeString(); }

  // The log grows by what each event brings (a long Werewolf game sends hundreds of messages):
  // the new messages and replies in time order, a reply sent in the same millisecond as a message
  // before it (the message answered it).
  var drawn = { messages: 0, sent: 0 };
  function drawLog() {
    var box = $('hs-log');
    var items = st.sent.slice(drawn.sent).map(function (s) { return { at: s.at_unix_ms, who: 'you', text: s.text }; })
      .concat(st.messages.slice(drawn.messages).map(function (m) { return { at: m.at_unix_ms, who: 'referee', text: m.text, n: m.n }; }));
    if (!items.length) return;
    drawn = { messages: st.messages.length, sent: st.sent.length };
    items.sort(function (a, b) { return a.at - b.at; });
    var follow = box.scrollTop + box.clientHeight >= box.scrollHeight - 20;
    items.forEach(function (it) {
      var d = el('div', { 'class': it.who === 'you' ? 'hs-you' : 'hs-ref' });
      d.appendChild(el('span', { 'class': 'muted' }, time(it.at) + (it.who === 'you' ? '  you → ' : '  → you  ')));
      var t = el('span', {}, it.text.replace(/\s+$/, ''));
      if (it.who === 'referee' && it.n === st.messages.length - 1) {
        var old = $('hs-last');
        if (old) { old.removeAttribute('id'); old.removeAttribute('data-n'); }
        t.id = 'hs-last';
        t.setAttribute('data-n', String(it.n));
      }
      d.appendChild(t);
      box.appendChild(d);
    });
    // A reader who scrolled back keeps their place.
    if (follow) box.scrollTop = box.scrollHeight;
  }

  function drawWaiting() {
    var w = $('hs-waiting');
    if (st.over) { w.textContent = 'This seat is over: ' + st.over; w.className = ''; return; }
    if (st.until === null) { w.textContent = 'Waiting for the other players…'; w.className = ''; return; }
    var left = Math.max(0, (st.until - Date.now()) / 1000);
    w.textContent = 'Your turn: reply within ' + left.toFixed(1) + ' s';
    w.className = left < 5 ? 'hs-urgent' : '';
  }
  setInterval(drawWaiting, 200);

  // ---- Geister: placement, then moves on the board as this seat sees it (spec §3.5).
  function geister(box, msg) {
    if (/^SET\?/.test(msg)) {
      var red = {};
      box.appendChild(el('p', {}, 'Choose your 4 red (bad) ghosts; the other 4 are blue (good).'));
      var done = el('button', { id: 'hs-set', type: 'button', disabled: '' }, 'place these 4 as red');
      'ABCDEFGH'.split('').forEach(function (g) {
        var b = el('button', { id: 'hs-g-' + g, type: 'button' }, g);
        b.onclick = function () {
          if (red[g]) delete red[g]; else red[g] = 1;
          b.className = red[g] ? 'hs-picked' : '';
          if (Object.keys(red).length === 4) done.removeAttribute('disabled'); else done.setAttribute('disabled', '');
        };
        box.appendChild(b);
      });
      done.onclick = function () { send('SET:' + Object.keys(red).sort().join('')); };
      box.appendChild(el('br'));
      box.appendChild(done);
      return;
    }
    var m = /^MOV\?(.{48})/.exec(msg);
    if (!m) return;
    var b = m[1], at = {}, own = [];
    for (var i = 0; i < 16; i++) {
      var x = b[3 * i], y = b[3 * i + 1], c = b[3 * i + 2];
      if (x > '5' || y > '5') continue;
      var g = 'ABCDEFGH'[i % 8];
      at[x + ',' + y] = { g: g, own: i < 8, c: c };
      if (i < 8) own.push(g);
    }
    var sel = null;
    var t = el('table', { 'class': 'hs-board', id: 'hs-board' });
    var dirs = { N: [0, -1], S: [0, 1], E: [1, 0], W: [-1, 0] };
    var exits = el('p', { id: 'hs-exits' });
    function draw() {
      t.textContent = ''; exits.textContent = '';
      var targets = {};
      if (sel) {
        Object.keys(dirs).forEach(function (d) {
          var nx = sel.x + dirs[d][0], ny = sel.y + dirs[d][1];
          if (nx >= 0 && nx < 6 && ny >= 0 && ny < 6) {
            var p = at[nx + ',' + ny];
            if (!p || !p.own) targets[nx + ',' + ny] = d;
          } else if (sel.c === 'B' && sel.y === 0 && (sel.x === 0 || sel.x === 5) && (d === 'N' || (sel.x === 0 ? d === 'W' : d === 'E'))) {
            var e = el('button', { id: 'hs-exit-' + d, type: 'button', 'class': 'hs-exit' }, 'escape ' + d);
            e.onclick = function () { send('MOV:' + sel.g + ',' + d); };
            exits.appendChild(e);
          }
        });
      }
      for (var y = 0; y < 6; y++) {
        var tr = el('tr');
        for (var x = 0; x < 6; x++) {
          var key = x + ',' + y, p = at[key];
          var btn = el('button', { id: 'hs-sq-' + x + '-' + y, type: 'button', title: '(' + x + ',' + y + ')' },
            p ? (p.own ? p.g : (p.c === 'u' ? '?' : p.c)) : '');
          var td = el('td');
          if (p) btn.className = 'hs-' + (p.own ? p.c : 'u');
          if (sel && sel.x === x && sel.y === y) td.className = 'hs-sel';
          if (targets[key]) td.className = 'hs-to';
          (function (x, y, p, d) {
            btn.onclick = function () {
              if (d && sel) { send('MOV:' + sel.g + ',' + d); return; }
              if (p && p.own) { sel = { x: x, y: y, g: p.g, c: p.c }; draw(); }
            };
          })(x, y, p, targets[key]);
          td.appendChild(btn); tr.appendChild(td);
        }
        t.appendChild(tr);
      }
    }
    box.appendChild(el('p', {}, 'Your ghosts are letters (red or blue); the opponent\'s are ?. Click a ghost, then where it goes. North is up.'));
    box.appendChild(t);
    box.appendChild(exits);
    draw();
  }

  // ---- Negotiate and Conquer / Religion War: READY, then the turn's targets (spec §2.3).
  function nac(box, msg) {
    var lines = msg.split('\n').filter(function (l) { return l.trim() !== ''; });
    var turn = -1;
    lines.forEach(function (l, i) { if (/^\d+ [DNWH]$/.test(l)) turn = i; });
    if (turn < 0) {
      if (st.messages.length) return;
      var r = el('button', { id: 'hs-ready', type: 'button' }, 'READY');
      r.onclick = function () { send('READY'); };
      box.appendChild(r);
      return;
    }
    var day = /[DW]$/.test(lines[turn]);
    var n = day ? 5 : 2, L = lines.length - turn - (day ? 3 : 2);
    var picks = [];
    var shown = el('p', { id: 'hs-picks' });
    var go = el('button', { id: 'hs-picks-send', type: 'button', disabled: '' }, 'send these targets');
    function show() {
      shown.textContent = 'Your picks (' + picks.length + ' of ' + n + '): ' + picks.join(' ');
      if (picks.length === n) go.removeAttribute('disabled'); else go.setAttribute('disabled', '');
    }
    box.appendChild(el('p', {}, 'Turn ' + lines[turn] + ': pick ' + n + ' targets (repeats allowed).'));
    for (var i = 0; i < L; i++) {
      (function (i) {
        var b = el('button', { id: 'hs-t-' + i, type: 'button' }, 'target ' + i);
        b.onclick = function () { if (picks.length < n) { picks.push(i); show(); } };
        box.appendChild(b);
      })(i);
    }
    var clear = el('button', { id: 'hs-clear', type: 'button' }, 'clear');
    clear.onclick = function () { picks = []; show(); };
    go.onclick = function () { send(picks.join(' ')); };
    box.appendChild(shown); box.appendChild(clear); box.appendChild(go);
    show();
  }

  // ---- Werewolf (AIWolf 0.6 TCP packets) and its natural-language division: who is alive and
  // who you are, learnt from every packet; a target is one click, talk a sentence or Over/Skip.
  var ww = { me: null, alive: {}, role: null };
  function learn(text) {
    var p;
    try { p = JSON.parse(text); } catch (e) { return; }
    var g = p && (p.gameInfo || p.info);
    if (!g) return;
    if (g.agent !== undefined && g.agent !== null) ww.me = g.agent;
    var status = g.statusMap || g.status_map;
    if (status) ww.alive = status;
    var roles = g.roleMap || g.role_map;
    if (roles && ww.me !== null && roles[ww.me]) ww.role = roles[ww.me];
  }
  function button(id, label, reply) {
    var b = el('button', { id: id, type: 'button' }, label);
    b.onclick = function () { send(reply); };
    return b;
  }
  function others() {
    return Object.keys(ww.alive).filter(function (a) { return ww.alive[a] === 'ALIVE' && String(a) !== String(ww.me); })
      .sort(function (a, b) { return (Number(a) - Number(b)) || (a < b ? -1 : a > b ? 1 : 0); });
  }
  function agentName(a) { return 'Agent[' + (Number(a) < 10 ? '0' : '') + Number(a) + ']'; }
  function werewolf(box, msg, nlp) {
    var p;
    try { p = JSON.parse(msg); } catch (e) { return; }
    var req = p.request;
    var who = 'You are ' + (nlp ? ww.me : agentName(ww.me)) + (ww.role ? ', ' + ww.role : '') + '. ';
    if (req === 'NAME') { box.appendChild(el('p', {}, 'The server asks your name: type it below and send.')); return; }
    if (req === 'ROLE') { box.appendChild(button('hs-ww-none', 'no role preference (none)', 'none')); return; }
    if (req === 'TALK' || req === 'WHISPER') {
      box.appendChild(el('p', {}, who + (req === 'TALK' ? 'Talk to the village' : 'Whisper to the werewolves') +
        (nlp ? ': type what you say below, or:' : ': build a sentence, type one below, or:')));
      box.appendChild(button('hs-ww-over', 'Over (nothing more today)', 'Over'));
      box.appendChild(button('hs-ww-skip', 'Skip (not now)', 'Skip'));
      if (nlp) return;
      var forms = ['VOTE {a}', 'ESTIMATE {a} WEREWOLF', 'ESTIMATE {a} VILLAGER', 'ESTIMATE {a} SEER',
        'COMINGOUT {me} SEER', 'COMINGOUT {me} MEDIUM', 'COMINGOUT {me} VILLAGER', 'COMINGOUT {me} WEREWOLF',
        '{me} DIVINED {a} HUMAN', '{me} DIVINED {a} WEREWOLF', 'REQUEST ANY (VOTE {a})', 'AGREE TALK day {a}'];
      var form = el('select', { id: 'hs-ww-form' });
      forms.slice(0, 11).forEach(function (f) { form.appendChild(el('option', { value: f }, f)); });
      var agent = el('select', { id: 'hs-ww-agent' });
      others().forEach(function (a) { agent.appendChild(el('option', { value: a }, agentName(a))); });
      var say = el('button', { id: 'hs-ww-say', type: 'button' }, 'say it');
      say.onclick = function () {
        send(form.value.replace('{a}', agentName(agent.value)).replace('{me}', agentName(ww.me)));
      };
      box.appendChild(el('br')); box.appendChild(form); box.appendChild(agent); box.appendChild(say);
      return;
    }
    var verbs = { VOTE: 'Vote to execute', DIVINE: 'Divine', GUARD: 'Guard', ATTACK: 'Attack' };
    if (!verbs[req]) return;
    box.appendChild(el('p', {}, who + verbs[req] + ':'));
    others().forEach(function (a, i) {
      var label = nlp ? a : agentName(a);
      box.appendChild(button('hs-target-' + (nlp ? i : a), label, nlp ? a : '{"agentIdx":' + Number(a) + '}'));
    });
  }

  // ---- Diplomacy (JSON): ready; each unit's (or site's) legal orders to choose from, which the
  // server offers with the phase (convoys are typed); press rounds answered with none.
  function diplomacy(box, msg) {
    var p;
    try { p = JSON.parse(msg); } catch (e) { return; }
    if (p.type === 'start') {
      box.appendChild(el('p', {}, 'You play ' + p.power + '.'));
      box.appendChild(button('hs-dip-ready', 'ready', '{"ready":true}'));
    } else if (p.type === 'phase') {
      var offer = st.choices && st.choices.orders ? st.choices.orders : {};
      var builds = p.builds || 0, removals = p.removals || 0;
      box.appendChild(el('p', {}, p.phase + ': ' + (builds ? 'build up to ' + builds + ' units' :
        removals ? 'remove ' + removals + ' units' : 'order your units') +
        ' (convoys and VIA: type them below).'));
      var t = el('table', { id: 'hs-dip-orders' });
      var selects = [];
      (p.orderable || []).forEach(function (u, i) {
        var tr = el('tr');
        tr.appendChild(el('td', {}, u));
        var s = el('select', { id: 'hs-dip-' + i, 'data-unit': u });
        if (builds || removals) s.appendChild(el('option', { value: '' }, builds ? '(no build)' : '(keep)'));
        (offer[u] || []).forEach(function (o) { s.appendChild(el('option', { value: o }, o)); });
        var td = el('td'); td.appendChild(s); tr.appendChild(td);
        t.appendChild(tr);
        selects.push(s);
      });
      box.appendChild(t);
      var go = el('button', { id: 'hs-dip-send', type: 'button' }, 'send these orders');
      go.onclick = function () {
        var orders = selects.map(function (s) { return s.value; }).filter(function (v) { return v !== ''; });
        send(JSON.stringify({ orders: orders }));
      };
      box.appendChild(go);
      box.appendChild(button('hs-dip-hold', 'order nothing (every unit holds)', '{"orders":[]}'));
    } else if (p.type === 'press') {
      box.appendChild(button('hs-dip-quiet', 'send no press', '{"messages":[]}'));
    }
  }

  function drawControls() {
    var box = $('hs-controls');
    var key = st.until === null || st.over ? -1 : st.messages.length;
    if (key === st.drawn) return;
    st.drawn = key;
    box.textContent = '';
    if (key < 0) return;
    if (game === 'geister') geister(box, last());
    else if (game === 'nac' || game === 'religion-war') nac(box, last());
    else if (game === 'werewolf' || game === 'werewolf-nlp') werewolf(box, last(), game === 'werewolf-nlp');
    else if (game === 'diplomacy') diplomacy(box, last());
  }

  var es = new EventSource(desk.getAttribute('data-events'));
  es.onmessage = function (ev) {
    var v = JSON.parse(ev.data);
    v.messages.forEach(function (m) { learn(m.text); });
    if (v.messages.length) st.choices = v.choices || null;
    st.messages = st.messages.concat(v.messages);
    st.sent = st.sent.slice(0, v.sent_first).concat(v.sent);
    st.until = v.waiting_until_unix_ms === undefined ? null : v.waiting_until_unix_ms;
    st.over = v.over || null;
    if (st.over) es.close();
    drawLog(); drawWaiting(); drawControls();
  };
})();
