// Kakehiki replay viewer: plain JavaScript and SVG, no network access, no external assets.
// Reads the view model from <script id="kv-model" type="application/json"> and draws it into #kv.
(function () {
  'use strict';
  const NS = 'http://www.w3.org/2000/svg';
  const root = document.getElementById('kv');
  const model = JSON.parse(document.getElementById('kv-model').textContent);
  const steps = model.steps || [];
  let at = 0, timer = null, speed = 1;
  // view: whose eyes the board is drawn with (`referee`, or `seatN`: only what seat N could see).
  const opts = { view: 'referee', ww: 'public', agent: 0 };

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null) continue;
      if (k === 'text') e.textContent = v; else if (k.startsWith('on')) e[k] = v; else e.setAttribute(k, v);
    }
    for (const k of kids) if (k !== null && k !== undefined) e.append(k);
    return e;
  }
  function sv(tag, attrs, ...kids) {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null) continue;
      if (k === 'text') e.textContent = v; else e.setAttribute(k, v);
    }
    for (const k of kids) if (k) e.append(k);
    return e;
  }
  function table(head, rows, attrs) {
    const t = el('table', attrs || {});
    t.append(el('tr', {}, ...head.map(h => el('th', { text: h }))));
    for (const r of rows) t.append(r);
    return t;
  }
  const seatName = i => (model.seats[i] && (model.seats[i].label || model.seats[i].name)) || ('seat ' + i);
  // The entrant alone, where its seat number is printed beside it.
  const rawName = i => (model.seats[i] && model.seats[i].name) || '';
  // One colour per seat (NAC, Religion War, Geister), so that seats of one bot stay apart.
  const SEAT_COLOURS = ['#1b6ca8', '#b5651d', '#2e8b57', '#8e44ad'];
  const GHOST_STROKE = ['#00234a', '#6b3a00'];
  const seatChip = i => el('span', { class: 'chip', style: `background:${(model.game === 'geister' ? GHOST_STROKE : SEAT_COLOURS)[i % SEAT_COLOURS.length]}`, 'aria-hidden': 'true' });

  // ---------------------------------------------------------------- controls
  const stage = el('div', { class: 'stage', id: 'kv-stage' });
  const panels = el('aside', { class: 'panels', id: 'kv-panels' });
  const pos = el('span', { id: 'kv-pos', class: 'muted' });
  const slider = el('input', { type: 'range', min: 0, max: Math.max(0, steps.length - 1), value: 0, id: 'kv-slider', 'aria-label': 'step' });
  const playBtn = el('button', { id: 'kv-play', text: '▶ play', title: 'play / pause (space)' });
  const speedSel = el('select', { id: 'kv-speed', 'aria-label': 'speed' },
    ...[0.5, 1, 2, 4, 8].map(s => el('option', { value: s, text: s + ' ' + model.unit + '/s' })));
  speedSel.value = '1';
  const link = el('a', { id: 'kv-link', href: '#t=0', text: 'link' });
  const extraCtl = el('span', { id: 'kv-extra' });
  root.classList.add('kv');
  root.append(
    el('div', { class: 'controls' },
      el('button', { id: 'kv-first', text: '«', title: 'first (Home)', onclick: () => go(0) }),
      el('button', { id: 'kv-prev', text: '◀', title: 'previous ' + model.unit + ' (←)', onclick: () => go(at - 1) }),
      playBtn,
      el('button', { id: 'kv-next', text: '▶', title: 'next ' + model.unit + ' (→)', onclick: () => go(at + 1) }),
      el('button', { id: 'kv-last', text: '»', title: 'last (End)', onclick: () => go(steps.length - 1) }),
      speedSel, slider, pos, link, extraCtl),
    el('div', { class: 'layout' }, stage, panels));
  slider.oninput = () => go(Number(slider.value));
  speedSel.onchange = () => { speed = Number(speedSel.value); if (timer) { stop(); play(); } };
  playBtn.onclick = () => (timer ? stop() : play());
  function play() {
    if (at >= steps.length - 1) go(0);
    playBtn.textContent = '‖ pause';
    timer = setInterval(() => { if (at >= steps.length - 1) stop(); else go(at + 1); }, 1000 / speed);
  }
  function stop() { clearInterval(timer); timer = null; playBtn.textContent = '▶ play'; }
  document.addEventListener('keydown', e => {
    if (e.target && (e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT')) return;
    if (e.key === 'ArrowRight') go(at + 1);
    else if (e.key === 'ArrowLeft') go(at - 1);
    else if (e.key === 'Home') go(0);
    else if (e.key === 'End') go(steps.length - 1);
    else if (e.key === ' ') { e.preventDefault(); timer ? stop() : play(); }
    else return;
  });
  function fromHash() {
    const m = /(?:^#|&)t=(\d+|end)/.exec(location.hash);
    // `#t=end`: the last step (where a page that followed a match as it was played goes on).
    return m ? (m[1] === 'end' ? steps.length - 1 : Number(m[1])) : null;
  }
  // `#t=6&view=seat1`: a link to a step as one seat saw it.
  function viewFromHash() {
    const m = /(?:^#|&)view=(referee|seat\d)/.exec(location.hash);
    return m ? m[1] : null;
  }
  const hashOf = i => '#t=' + i + (opts.view !== 'referee' ? '&view=' + opts.view : '');
  window.addEventListener('hashchange', () => {
    const v = viewFromHash();
    if (v && v !== opts.view) setView(v);
    const t = fromHash(); if (t !== null && t !== at) go(t, true);
  });
  let viewSel = null;
  function setView(v) {
    opts.view = v;
    if (viewSel) viewSel.value = v;
    root.dataset.view = v;
  }
  function go(i, fromLink) {
    at = Math.max(0, Math.min(steps.length - 1, i | 0));
    slider.value = at;
    const s = steps[at];
    pos.textContent = ` ${model.unit} step ${at} of ${steps.length - 1}: ${s ? s.title : ''}`;
    link.href = hashOf(at);
    if (!fromLink && history.replaceState) history.replaceState(null, '', hashOf(at));
    root.dataset.step = at;
    render();
    seatNow();
  }

  // ---------------------------------------------------------------- side panels
  // A reply time in milliseconds as read: under one as microseconds, and none recorded (a game
  // that records whole milliseconds, a built-in answering at once) as under 1 ms, never a bare
  // "0.0 ms".
  function duration(ms) {
    if (ms >= 10) return `${ms.toFixed(0)} ms`;
    if (ms >= 1) return `${ms.toFixed(1)} ms`;
    if (ms > 0) return `${Math.max(1, Math.round(ms * 1000))} µs`;
    return 'under 1 ms';
  }

  function drawPanels() {
    panels.replaceChildren();
    const many = model.seats.length > 7;
    panels.classList.toggle('compact', many);
    model.seats.forEach((s, i) => {
      const box = el('div', { class: 'seat', 'data-seat': i });
      const chip = (model.game === 'nac' || model.game === 'religion-war' || model.game === 'geister') ? seatChip(i) : null;
      box.append(el('h4', {}, chip, seatLabel(i)));
      const mean = s.moves ? (s.total_ms / s.moves) : 0;
      box.append(el('div', { class: 'muted', text: `${s.moves} ${s.moves === 1 ? 'reply' : 'replies'} · mean ${duration(mean)} · max ${duration(s.max_ms)}` }));
      if (s.errors.length) {
        const ul = el('ul', { class: 'errors' });
        for (const e of s.errors.slice(0, 200)) {
          // The game's own label (`S1901M`, `ply 15`, `round 3`) where the replay gives one.
          ul.append(el('li', { class: 'err' },
            el('a', { href: '#t=' + e.step, class: 'step-link', text: e.at || (steps[e.step] ? steps[e.step].title : model.unit + ' ' + e.step) }), ': ' + e.kind + ' — ' + e.detail));
        }
        if (s.errors.length > 200) ul.append(el('li', { text: `… ${s.errors.length - 200} more` }));
        box.append(ul);
      } else box.append(el('div', { class: 'muted', text: 'no errors' }));
      if (s.exit) box.append(el('div', { class: 'muted exit', text: 'exit: ' + s.exit }));
      // This step's requests to the seat (from the seat record), filled in by seatNow().
      if (s.exchanges) box.append(el('div', { class: 'seat-now', 'data-seat': i }));
      if (typeof s.stderr === 'string') {
        box.append(el('details', {}, el('summary', { text: 'stderr (' + s.stderr.length + ' bytes)' }), el('pre', { class: 'stderr', text: s.stderr })));
      }
      panels.append(box);
    });
  }
  // One request of the seat record as a table row: label, kind, outcome, time / limit, reply.
  const exchangeRow = (x, withSeat) => el('tr', { class: 'exchange', 'data-outcome': x.outcome },
    ...(withSeat ? [el('td', { text: seatName(x.seat) })] : []),
    el('td', { text: x.at }), el('td', { text: x.kind }), el('td', { class: x.outcome === 'reply' || x.outcome === 'sent' ? '' : 'err', text: x.outcome + (x.detail ? ' (' + x.detail + ')' : '') }),
    el('td', { class: 'num', text: (x.time_ms === undefined ? '-' : duration(x.time_ms)) + ' / ' + (x.limit_ms === undefined ? '-' : x.limit_ms + ' ms') }),
    el('td', {}, el('code', { text: x.raw === undefined ? '' : x.raw })));
  const exchangeHead = withSeat => [...(withSeat ? ['seat'] : []), 'at', 'kind', 'outcome', 'time / limit', 'reply'];
  // What the bot wrote on stderr from a request until its next (in a private view only), as
  // text in a small box under the request's row; nothing when it wrote nothing.
  function stderrRow(x, withSeat) {
    if (typeof x.stderr !== 'string' && !x.stderr_dropped) return null;
    const sep = x.stderr && !x.stderr.endsWith('\n') ? '\n' : '';
    const cut = x.stderr_dropped ? `${sep}[${x.stderr_dropped} more bytes dropped: the match's stderr cap]` : '';
    return el('tr', { class: 'exchange-stderr', 'data-at': x.at },
      el('td', { colspan: exchangeHead(withSeat).length },
        el('pre', { class: 'stderr-step', title: 'stderr', text: (x.stderr || '') + cut })));
  }
  const exchangeRows = (xs, withSeat) => xs.flatMap(x => [exchangeRow(x, withSeat), stderrRow(x, withSeat)]).filter(r => r);
  // Whether a step shows the moment `label` (as step_has in crates/web/src/view/seats.rs): it
  // names it in `at`, or its title is the label, alone or before a parenthesis.
  function stepHas(s, label) {
    if (!s) return false;
    if (Array.isArray(s.at)) return s.at.includes(label);
    if (typeof s.at === 'string') return s.at === label;
    return s.title === label || (typeof s.title === 'string' && s.title.startsWith(label + ' ('));
  }
  // Each seat's requests at the current step's label(s).
  function seatNow() {
    for (const box of panels.querySelectorAll('.seat-now')) {
      const xs = model.seats[Number(box.dataset.seat)].exchanges.filter(x => stepHas(steps[at], x.at));
      box.replaceChildren(...(xs.length ? [table(exchangeHead(false), exchangeRows(xs, false), { class: 'exchanges' })] : []));
    }
  }

  // ---------------------------------------------------------------- generic (no board viewer)
  // A game without a viewer of its own: the step's requests and the game's own events.
  function generic(s) {
    const out = el('div', { class: 'generic' }, el('h3', { text: s.title }));
    if (s.exchanges.length) out.append(table(exchangeHead(true), exchangeRows(s.exchanges, true), { id: 'generic-exchanges' }));
    for (const e of s.events) out.append(el('pre', { class: 'event', text: JSON.stringify(e) }));
    if (at === steps.length - 1 && model.result) out.append(el('p', { class: 'result', text: 'result: ' + JSON.stringify(model.result) }));
    return out;
  }
  function seatLabel(i) {
    if (model.game === 'diplomacy') return `${model.extra.powers[i]} — ${seatName(i)}`;
    if (model.game === 'werewolf' || model.game === 'werewolf-nlp') return `${agentName(i + 1)} — ${model.seats[i].name}`;
    return `seat ${i} — ${model.seats[i] ? model.seats[i].name : ''}`;
  }

  // ---------------------------------------------------------------- Geister
  // A ghost's body: seat 0's point up (it plays from the bottom), seat 1's point down.
  function ghostPath(seat, cx, cy, k) {
    k = k || 1;
    return seat === 0
      ? `M${cx - 20 * k},${cy + 20 * k} L${cx - 20 * k},${cy - 4 * k} Q${cx},${cy - 30 * k} ${cx + 20 * k},${cy - 4 * k} L${cx + 20 * k},${cy + 20 * k} Z`
      : `M${cx - 20 * k},${cy - 20 * k} L${cx - 20 * k},${cy + 4 * k} Q${cx},${cy + 30 * k} ${cx + 20 * k},${cy + 4 * k} L${cx + 20 * k},${cy - 20 * k} Z`;
  }
  function geisterLegend() {
    const box = el('div', { id: 'geister-legend', class: 'legend' });
    [0, 1].forEach(seat => {
      const icon = sv('svg', { viewBox: '0 0 28 28', width: 22, height: 22, class: 'legend-icon' },
        sv('path', { d: ghostPath(seat, 14, 14, 0.55), fill: '#9a9a9a', stroke: GHOST_STROKE[seat], 'stroke-width': 3 }));
      box.append(el('div', { class: 'legend-item', style: 'flex-basis:100%', 'data-seat': seat }, icon,
        ` seat ${seat} (${rawName(seat)}): ${seat === 0 ? 'rounded top, from the bottom rows, leaves by the top corners' : 'rounded bottom, from the top rows, leaves by the bottom corners'}`));
    });
    const swatch = (fill, text) => el('span', { class: 'legend-item' }, el('span', { class: 'chip', style: `background:${fill}` }), text);
    box.append(swatch('#d63a3a', 'red ghost'), swatch('#2f6fd6', 'blue ghost'), swatch('#9a9a9a', 'colour not known to the chosen seat'),
      el('span', { class: 'legend-item' }, el('span', { class: 'chip', style: 'background:#f2c200' }), 'last move (arrow)'));
    return box;
  }
  function geister(s) {
    const C = 64, P = 20;
    const view = opts.view;
    const svg = sv('svg', { viewBox: `0 0 ${6 * C + 2 * P} ${6 * C + 2 * P}`, width: 6 * C + 2 * P, id: 'geister-board' });
    svg.append(sv('defs', {}, sv('marker', { id: 'geister-arrow', viewBox: '0 0 10 10', refX: 8, refY: 5, markerWidth: 5, markerHeight: 5, orient: 'auto-start-reverse' }, sv('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#8a6400' }))));

    for (let y = 0; y < 6; y++) for (let x = 0; x < 6; x++) {
      svg.append(sv('rect', { x: P + x * C, y: P + y * C, width: C, height: C, fill: (x + y) % 2 ? '#e9dcc0' : '#f6ecd6', stroke: '#b9a67a' }));
    }
    // The protocol's x (columns, from the left) and y (rows, from the top), 0 to 5, of seat 0's
    // frame, in which the board is drawn and the move text names squares `(x,y)`.
    for (let i = 0; i < 6; i++) {
      svg.append(sv('text', { x: P + i * C + C - 4, y: P + 6 * C - 4, 'text-anchor': 'end', 'font-size': 10, fill: '#5a4a25', class: 'coord', text: 'x' + i }));
      svg.append(sv('text', { x: P + 3, y: P + i * C + 12, 'font-size': 10, fill: '#5a4a25', class: 'coord', text: 'y' + i }));
    }
    // Exits: seat 0 leaves through the top corners, seat 1 through the bottom ones.
    for (const [x, y, seat] of [[0, 0, 0], [5, 0, 0], [0, 5, 1], [5, 5, 1]]) {
      svg.append(sv('text', { x: P + x * C + C / 2, y: y === 0 ? P - 5 : P + 6 * C + 15, 'text-anchor': 'middle', 'font-size': 12, fill: seat ? '#7a4b00' : '#004b7a', class: 'exit', text: `exit (seat ${seat})` }));
      svg.append(sv('rect', { x: P + x * C + 3, y: P + y * C + 3, width: C - 6, height: C - 6, fill: 'none', stroke: seat ? '#7a4b00' : '#004b7a', 'stroke-dasharray': '4 3' }));
    }
    let arrow = null;
    if (s.from) {
      const [fx, fy] = s.from;
      svg.append(sv('rect', { x: P + fx * C, y: P + fy * C, width: C, height: C, fill: 'rgba(255,220,0,.35)', class: 'last-from' }));
      let tx, ty;
      if (s.to) {
        [tx, ty] = s.to;
        svg.append(sv('rect', { x: P + tx * C, y: P + ty * C, width: C, height: C, fill: 'rgba(255,220,0,.55)', class: 'last-to' }));
      } else if (s.escaped) {
        // An escape leaves through the exit corner: up for seat 0, down for seat 1.
        [tx, ty] = [fx, s.seat === 0 ? fy - 0.6 : fy + 0.6];
      }
      if (tx !== undefined) {
        // Drawn over the ghosts, from the edge of the square left to the edge of the one entered.
        const dx = Math.sign(tx - fx), dy = Math.sign(ty - fy), e = s.to ? C / 2 - 10 : 0;
        arrow = sv('line', { class: 'move-arrow', x1: P + fx * C + C / 2, y1: P + fy * C + C / 2, x2: P + tx * C + C / 2 - dx * e, y2: P + ty * C + C / 2 - dy * e, stroke: '#7a5600', 'stroke-width': 4, 'marker-end': 'url(#geister-arrow)' });
      }
    }
    // The ghosts on the board: one token per ghost, `SLCXY` (seat, label, r/b, x, y).
    // `u`: a colour the replay has not told yet (a match being played).
    const ghosts = s.board.pieces.split(' ').filter(t => t.length === 5).map(t => ({ seat: +t[0], label: t[1], red: t[2] === 'r', told: t[2] !== 'u', x: +t[3], y: +t[4] }));
    for (const g of ghosts) {
      const known = g.told && (view === 'referee' || view === 'seat' + g.seat);
      const colour = known ? (g.red ? 'red' : 'blue') : 'unknown';
      const fill = colour === 'red' ? '#d63a3a' : colour === 'blue' ? '#2f6fd6' : '#9a9a9a';
      const cx = P + g.x * C + C / 2, cy = P + g.y * C + C / 2;
      svg.append(sv('g', { class: 'ghost', 'data-seat': g.seat, 'data-label': g.label, 'data-x': g.x, 'data-y': g.y, 'data-colour': colour },
        sv('path', { d: ghostPath(g.seat, cx, cy), fill, stroke: GHOST_STROKE[g.seat], 'stroke-width': 3 }),
        sv('text', { x: cx, y: cy + 6, 'text-anchor': 'middle', 'font-size': 16, fill: '#fff', 'font-weight': 'bold', text: g.label })));
    }
    if (arrow) svg.append(arrow);
    const out = el('div');
    const lines = [];
    if (s.ply) {
      let t = `ply ${s.ply}: seat ${s.seat} (${rawName(s.seat)}) `;
      // The move in the board's frame; what the bot sent is in its own frame (its north is
      // towards the opponent), so seat 1's "N" is the board's down.
      if (s.move) t += `moved ${s.board_move || s.move}` + (s.escaped ? ' and escaped' : '') + (s.captured ? `, capturing ${s.captured.red ? 'red' : 'blue'} ${s.captured.label}` : '') + ` (sent "${s.move}" in its own frame)`;
      else t += `${s.outcome}` + (s.raw !== null && s.raw !== undefined ? ` (sent ${JSON.stringify(s.raw)})` : '') + (s.reason ? `: ${s.reason}` : '');
      t += ` · ${s.elapsed_ms} ms`;
      lines.push(el('p', { id: 'geister-move', text: t }));
    }
    for (const n of s.notes || []) lines.push(el('p', { class: 'notes', text: n }));
    const trays = el('div', { class: 'trays' });
    [0, 1].forEach(seat => {
      // A captured ghost's colour is told to both players; an escaped one's only by the escape.
      const items = s.board.off[seat].map(o => el('span', { class: 'off', 'data-seat': seat, 'data-label': o.label, 'data-how': o.how, style: `color:${o.red ? '#d63a3a' : '#2f6fd6'};margin-right:.5rem`, text: `${o.label} (${o.red ? 'red' : 'blue'}, ${o.how})` }));
      trays.append(el('div', {}, el('strong', { text: `seat ${seat} lost: ` }), ...(items.length ? items : [el('span', { class: 'muted', text: 'none' })])));
    });
    out.append(geisterLegend(), svg, trays, ...lines);
    if (at === steps.length - 1 && model.result) out.append(el('div', { class: 'result', id: 'kv-result', text: geisterResult(model.result) }));
    return out;
  }
  function geisterResult(r) {
    if (!r) return '';
    const who = r.winner === null || r.winner === undefined ? (r.draw ? 'draw' : 'no winner') : `winner: seat ${r.winner} (${rawName(r.winner)})`;
    return `${who} · end: ${r.reason} · ${r.plies} plies` + (r.scores ? ` · scores ${r.scores.join(' : ')}` : '');
  }

  // ---------------------------------------------------------------- NAC / Religion War
  // NAC / Religion War as the chosen seat saw it (opts.view `seatN`): the revealed affection of
  // everyone, its own real affection and picks; the other seats' real affection, picks, replies
  // and errors are hidden, and so are scores it could not work out (before the affections are
  // revealed, and the final scoring until the game is over).
  function nac(s) {
    const x = model.extra, noun = x.noun, out = el('div');
    const Noun = noun[0].toUpperCase() + noun.slice(1);
    const eye = /^seat(\d)$/.exec(opts.view), me = eye ? Number(eye[1]) : null;
    const sees = i => me === null || me === i;
    const hidden = () => el('td', { class: 'num hidden', title: 'not known to seat ' + me, text: '?' });
    const last = at === steps.length - 1;
    out.append(el('h3', { text: (s.turn ? `turn ${s.turn}: ${s.day ? 'day' : 'night'} (${s.label})` : 'before turn 1') + (me !== null ? ` — as seat ${me} (${model.seats[me].name}) saw it` : '') }));
    const headRow = el('tr', {}, el('th', { text: Noun }), el('th', { text: 'strength' }));
    for (let i = 0; i < 4; i++) {
      headRow.append(el('th', { 'data-seat': i }, seatChip(i), `seat ${i} revealed`), el('th', { 'data-seat': i }, seatChip(i), `seat ${i} real`));
    }
    const rows = [];
    for (let t = 0; t < x.targets; t++) {
      const r = el('tr', { 'data-lord': t });
      r.append(el('td', { text: `${Noun} ${t + 1}` }), el('td', { class: 'num', text: x.weights[t] }));
      for (let i = 0; i < 4; i++) {
        r.append(el('td', { class: 'num', 'data-lord': t, 'data-seat': i, 'data-kind': 'revealed', text: s.public[t][i] }));
        r.append(sees(i) ? el('td', { class: 'num muted', 'data-lord': t, 'data-seat': i, 'data-kind': 'real', text: s.real[t][i] }) : hidden());
      }
      rows.push(r);
    }
    const aff = el('table', { id: 'nac-affection' });
    aff.append(headRow, ...rows);
    out.append(aff);
    out.append(el('p', { class: 'muted', text: me === null
      ? `Revealed: what every player sees (day picks count publicly${x.reveal_after ? `, and after turn ${x.reveal_after} everything is revealed` : ''}). Real: the true affection, each known only to its own player (choose a seat above to see only what it saw).`
      : `As seat ${me} saw it: everyone's revealed affection and its own real affection and picks; "?" marks what it was not told.` }));
    if (s.moves && s.moves.length) {
      const moveRows = s.moves.map(m => sees(m.seat)
        ? el('tr', { 'data-seat': m.seat },
          el('td', {}, seatChip(m.seat), seatName(m.seat)), el('td', { text: m.status }), el('td', { text: m.raw !== undefined ? m.raw : (m.raw_b64 ? '(binary)' : '') }),
          el('td', { class: 'picks', text: (m.picks || []).map(p => p + 1).join(' ') }),
          el('td', { class: 'num', text: m.time_us !== undefined ? duration(m.time_us / 1000) : '' }),
          el('td', { class: 'err', text: (m.errors || []).map(e => e.code).join(', ') + (m.detail ? ' ' + m.detail : '') }))
        : el('tr', { 'data-seat': m.seat, class: 'hidden-row' }, el('td', {}, seatChip(m.seat), seatName(m.seat)), el('td', { class: 'muted', colspan: 5, text: 'not seen by seat ' + me })));
      // A night's picks reach every seat only as counts per target (in the next day's block).
      if (me !== null && !s.day) {
        const counts = new Array(x.targets).fill(0);
        for (const m of s.moves) for (const p of m.picks || []) if (p >= 0 && p < x.targets) counts[p]++;
        moveRows.push(el('tr', { class: 'counts' }, el('td', { text: 'all seats (counts, told next day)' }), el('td', { colspan: 5, text: counts.map((c, t) => `${Noun} ${t + 1}: ${c}`).join(' · ') })));
      }
      out.append(table(['seat', 'status', 'reply', 'picks (' + noun + 's)', 'time', 'errors'], moveRows, { id: 'nac-moves' }));
    }
    for (const d of s.deaths || []) if (sees(d.seat)) out.append(el('p', { class: 'err', text: `${seatName(d.seat)} is out: ${d.reason} — ${d.detail}` }));
    // A seat can work out the scores only from revealed affection, or once the game is over.
    const scoresKnown = me === null || last || (x.reveal_after && s.turn >= x.reveal_after);
    const sc = [];
    for (let i = 0; i < 4; i++) sc.push(el('tr', { 'data-seat': i }, el('td', {}, seatChip(i), seatName(i)),
      scoresKnown ? el('td', { class: 'num', text: s.scoring ? s.scoring[i] : '' }) : hidden(),
      scoresKnown ? el('td', { class: 'num total', 'data-seat': i, text: s.totals[i] }) : hidden()));
    out.append(table(['seat', s.scoring ? `scored after turn ${s.turn}` : 'scored this turn', 'running total'], sc, { id: 'nac-scores' }));
    if (last && model.result) {
      const r = model.result;
      out.append(el('div', { class: 'result', id: 'kv-result', text: r.winner !== null && r.winner !== undefined ? `winner: ${seatName(r.winner)} · scores ${r.scores.join(', ')}` : `draw between ${(r.tied || []).map(seatName).join(', ')} · scores ${r.scores.join(', ')}` }));
    }
    return out;
  }

  // ---------------------------------------------------------------- Werewolf
  // The natural-language division names agents by their in-game names (profiles or Agent[NN]).
  const agentName = a => (model.game === 'werewolf-nlp' && model.extra.names[a - 1]) || `Agent[${String(a).padStart(2, '0')}]`;
  function werewolf(s) {
    const x = model.extra, out = el('div'), last = at === steps.length - 1;
    const showRoles = opts.ww === 'omniscient' || last;
    const wolvesView = opts.ww !== 'public';
    const f = opts.agent;
    const keep = a => !f || a === f;
    const PHASES = { whisper: "werewolves' whispers", talk: 'talk', vote: 'vote and execution', night: 'night', end: 'result' };
    out.append(el('h3', { id: 'ww-phase', 'data-day': s.day, 'data-phase': s.phase, text: `day ${s.day} — ${PHASES[s.phase] || s.phase}` }));
    // Every agent, wrapped in a grid so that 15 (or more) fit the stage's width.
    const alive = el('ul', { id: 'ww-alive', class: 'agents' });
    s.alive.forEach((a, i) => alive.append(el('li', { class: a ? 'alive' : 'dead', 'data-agent': i + 1, title: seatName(i) + (a ? '' : ' (dead)'), text: agentName(i + 1) + (showRoles ? ` (${x.roles[i]})` : '') })));
    out.append(el('div', {}, el('strong', { text: s.phase === 'night' ? 'alive at nightfall: ' : s.phase === 'end' ? 'alive at the end: ' : 'alive at dawn: ' }), alive));
    // Free text (natural-language division) has no protocol reading: no reading column.
    const free = model.game === 'werewolf-nlp';
    const head = free ? ['turn', 'agent', 'said'] : ['turn', 'agent', 'said', 'reading'];
    const talkRows = (list, cls) => list.filter(t => keep(t.agent)).map(t => el('tr', { class: cls, 'data-agent': t.agent },
      el('td', { class: 'num', text: t.turn }), el('td', { text: agentName(t.agent) }), el('td', { class: 'said', text: t.text }), ...(free ? [] : [el('td', { text: t.english })])));
    if (s.talk.length) out.append(el('h4', { text: 'talk' }), el('div', { class: 'scroll' }, table(head, talkRows(s.talk, 'talk'), { id: 'ww-talk' })));
    if (wolvesView && s.whisper.length) {
      out.append(el('h4', { text: 'whispers (werewolves only)' }), el('div', { class: 'scroll' }, table(head, talkRows(s.whisper, 'wolf'), { id: 'ww-whisper' })));
    }
    s.votes.forEach((round, k) => {
      out.append(el('h4', { text: k ? `re-vote ${k}` : 'vote' }));
      out.append(table(['voter', 'voted for'], round.filter(v => keep(v.agent) || keep(v.target)).map(v => el('tr', { class: 'vote', 'data-agent': v.agent, 'data-target': v.target },
        el('td', { text: agentName(v.agent) }), el('td', { text: v.target > 0 ? agentName(v.target) : 'nobody' }))), { class: 'ww-votes', 'data-round': k }));
    });
    const night = [];
    if (s.executed) night.push(el('li', { id: 'ww-executed', text: `executed: ${agentName(s.executed.agent)}` + (showRoles ? ` (${s.executed.role})` : '') }));
    if (wolvesView) {
      s.attack_votes.forEach((round, k) => night.push(el('li', { class: 'wolf', text: `werewolves' attack vote${k ? ' (again)' : ''}: ` + round.map(v => `${agentName(v.agent)} → ${v.target > 0 ? agentName(v.target) : 'nobody'}`).join(', ') })));
    }
    if (opts.ww === 'omniscient' || last) {
      for (const d of s.divined) night.push(el('li', { text: d.seer ? `seer ${agentName(d.seer)} divined ${agentName(d.target)}: ${d.species}` : `medium ${agentName(d.medium)} identified ${agentName(d.target)}: ${d.species}` }));
      for (const g of s.guarded) night.push(el('li', { text: `bodyguard ${agentName(g.bodyguard)} guarded ${agentName(g.target)}` }));
    }
    if (s.attacked) night.push(el('li', { id: 'ww-attacked', text: s.attacked.target > 0 ? `attacked: ${agentName(s.attacked.target)} — ${s.attacked.success ? 'killed' : 'survived (guarded)'}` : 'no attack' }));
    if (night.length) out.append(el('h4', { text: s.phase === 'vote' ? 'executed' : 'night' }), el('ul', {}, ...night));
    if ((s.phase === 'night' || s.phase === 'whisper') && !night.length && !(wolvesView && s.whisper.length)) {
      out.append(el('p', { class: 'muted', text: s.whisper.length ? `the werewolves whispered ${s.whisper.length} times (choose the werewolves' view to read them)` : 'nothing the chosen view shows happened this night' }));
    }
    if (s.result) out.append(el('p', { text: `left: ${s.result.humans} humans, ${s.result.werewolves} werewolves` }));
    if (last && model.result) {
      out.append(el('div', { class: 'result', id: 'kv-result', text: model.result.winner ? `the ${model.result.winner} team wins (day ${model.result.day})` : `no winner: the game was cut short${model.result.aborted ? ' (too many agents in error)' : ''} (day ${model.result.day})` }));
      out.append(table(['agent', 'entrant', 'role'], x.roles.map((r, i) => el('tr', { 'data-agent': i + 1 }, el('td', { text: agentName(i + 1) }), el('td', { text: seatName(i) }), el('td', { class: 'role', text: r }))), { id: 'ww-roles' }));
    }
    return out;
  }

  // ---------------------------------------------------------------- Diplomacy
  const POWER_COLOURS = { AUSTRIA: '#c0392b', ENGLAND: '#1f3f8f', FRANCE: '#3fa7e0', GERMANY: '#4d4d4d', ITALY: '#2e8b57', RUSSIA: '#8e44ad', TURKEY: '#d4a017' };
  // A territory's fill: its power's colour mixed with white, light enough for dark labels.
  function tint(hex, k) {
    const n = parseInt(hex.slice(1), 16), mix = c => Math.round(c * k + 255 * (1 - k));
    return '#' + [n >> 16, (n >> 8) & 255, n & 255].map(c => mix(c).toString(16).padStart(2, '0')).join('');
  }
  const TERRITORY = Object.fromEntries(Object.entries(POWER_COLOURS).map(([p, c]) => [p, tint(c, 0.42)]));
  const LAND = '#efe6cf', SEA = '#bcd8ef', IMPASSABLE = 'url(#impassable)', COAST = '#2d5472';
  // The map: a Voronoi diagram of the province sites in dipmap.js (a province's middle, and a
  // few extra sites that give long provinces their shape); a province is the union of its
  // sites' cells. Computed once: per province its pieces and its middle, and every border
  // between two provinces with the two it separates.
  let dipGeo = null;
  function dipGeometry() {
    if (dipGeo) return dipGeo;
    const W = 980, H = 840;
    const proj = ([lon, lat]) => [(lon + 25) * 14, (72 - lat) * 20];
    const sites = Object.entries(window.KAKEHIKI_DIP_CENTRES).map(([k, ll]) => [k, proj(ll)]);
    for (const [k, list] of Object.entries(window.KAKEHIKI_DIP_EXTRA || {})) for (const ll of list) sites.push([k, proj(ll)]);
    const pieces = sites.map(([k, a]) => {
      let poly = [[0, 0], [W, 0], [W, H], [0, H]];
      for (const [, b] of sites) {
        if (b === a) continue;
        const nx = b[0] - a[0], ny = b[1] - a[1];
        const c = (b[0] * b[0] + b[1] * b[1] - a[0] * a[0] - a[1] * a[1]) / 2;
        const inside = p => nx * p[0] + ny * p[1] <= c;
        const next = [];
        for (let i = 0; i < poly.length; i++) {
          const p = poly[i], q = poly[(i + 1) % poly.length];
          const pi = inside(p), qi = inside(q);
          if (pi) next.push(p);
          if (pi !== qi) {
            const t = (c - nx * p[0] - ny * p[1]) / (nx * (q[0] - p[0]) + ny * (q[1] - p[1]));
            next.push([p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])]);
          }
        }
        poly = next;
        if (!poly.length) break;
      }
      return { k, a, poly };
    });
    const cells = {};
    for (const [k, a] of Object.entries(window.KAKEHIKI_DIP_CENTRES)) cells[k] = { c: proj(a), polys: [] };
    for (const p of pieces) cells[p.k].polys.push(p.poly);
    // Borders: the part of two sites' bisector both cells have on their outline.
    const borders = [];
    for (let i = 0; i < pieces.length; i++) for (let j = i + 1; j < pieces.length; j++) {
      const A = pieces[i], B = pieces[j];
      if (A.k === B.k) continue;
      const nx = B.a[0] - A.a[0], ny = B.a[1] - A.a[1], n = Math.hypot(nx, ny);
      const c = (B.a[0] ** 2 + B.a[1] ** 2 - A.a[0] ** 2 - A.a[1] ** 2) / 2;
      const on = p => Math.abs(nx * p[0] + ny * p[1] - c) / n < 0.3;
      A.poly.forEach((p, e) => {
        const q = A.poly[(e + 1) % A.poly.length];
        if (on(p) && on(q) && Math.hypot(q[0] - p[0], q[1] - p[1]) > 0.5) borders.push({ a: A.k, b: B.k, p, q });
      });
    }
    dipGeo = { cells, borders };
    return dipGeo;
  }
  // Boxes placed so far on the map, so that no label is drawn over another label, a unit or a
  // supply-centre marker.
  function placer() {
    const boxes = [];
    const overlap = (a, b) => Math.max(0, Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1)) * Math.max(0, Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1));
    return {
      add(b) { boxes.push(b); },
      // The first candidate box that overlaps nothing placed (else the least overlapping).
      best(cands) {
        let pick = cands[0], least = Infinity;
        for (const c of cands) {
          if (c.x1 < 0 || c.y1 < 0 || c.x2 > 980 || c.y2 > 840) continue;
          const o = boxes.reduce((s, b) => s + overlap(b, c), 0);
          if (o < least) { least = o; pick = c; }
          if (!o) break;
        }
        boxes.push(pick);
        return pick;
      },
    };
  }
  const provOf = unit => unit.split(' ')[1].split('/')[0];
  const isFailed = o => o.result === 'fails' || o.result === 'void';
  function diplomacy(s) {
    const x = model.extra, geo = dipGeometry(), cells = geo.cells, out = el('div');
    const provs = {};
    for (const p of x.provinces) provs[p.abbr] = p;
    const state = s.state || {};
    // Who controls a territory: the owner of its supply centre, else the power whose unit
    // stands on it (land only).
    const owner = {}, control = {};
    for (const [pw, list] of Object.entries(state.centers || {})) for (const c of list) owner[c] = pw;
    for (const [pw, list] of Object.entries(state.units || {})) for (const u of list) {
      const pr = provOf(u);
      if (provs[pr] && provs[pr].kind !== 'sea' && !provs[pr].sc) control[pr] = pw;
    }
    for (const [k, pw] of Object.entries(owner)) control[k] = pw;
    const svg = sv('svg', { viewBox: '0 0 980 840', width: 980, id: 'dip-map' });
    const defs = sv('defs');
    for (const [id, col] of [['ok', '#222'], ['bad', '#c00000']]) {
      defs.append(sv('marker', { id: 'arrow-' + id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' }, sv('path', { d: 'M0,0 L10,5 L0,10 z', fill: col })));
    }
    // Impassable ground (Switzerland, the Sahara) hatched, unlike any power's colour.
    defs.append(sv('pattern', { id: 'impassable', width: 8, height: 8, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
      sv('rect', { width: 8, height: 8, fill: '#e4ddca' }), sv('line', { x1: 0, y1: 0, x2: 0, y2: 8, stroke: '#b3a88c', 'stroke-width': 3 })));
    svg.append(defs);
    for (const [k, cell] of Object.entries(cells)) {
      const p = provs[k], who = control[k];
      const fill = !p ? IMPASSABLE : p.kind === 'sea' ? SEA : who ? TERRITORY[who] : LAND;
      // The pieces of one province in one colour, outlined in it so that no seam shows.
      for (const poly of cell.polys) {
        svg.append(sv('polygon', { points: poly.map(q => q.map(v => v.toFixed(1)).join(',')).join(' '), fill, stroke: fill, 'stroke-width': 1, class: 'province', 'data-prov': k, 'data-kind': p ? p.kind : 'impassable', 'data-owner': who || '' }));
      }
    }
    // Borders: thin between two lands or two seas; coastlines (a land and a sea) dark and thick.
    const isSea = k => Boolean(provs[k] && provs[k].kind === 'sea');
    const line = e => `M${e.p[0].toFixed(1)},${e.p[1].toFixed(1)} L${e.q[0].toFixed(1)},${e.q[1].toFixed(1)}`;
    const inner = sv('g', { class: 'borders' }), coast = sv('g', { class: 'coastlines' });
    for (const e of geo.borders) {
      if (isSea(e.a) !== isSea(e.b)) {
        const [land, sea] = isSea(e.a) ? [e.b, e.a] : [e.a, e.b];
        coast.append(sv('path', { class: 'coast', 'data-land': land, 'data-sea': sea, d: line(e), stroke: COAST, 'stroke-width': 2.5, 'stroke-linecap': 'round', fill: 'none' }));
      } else {
        inner.append(sv('path', { class: 'border', 'data-a': e.a, 'data-b': e.b, d: line(e), stroke: isSea(e.a) ? '#8fb3d3' : '#a08f68', 'stroke-width': 1, fill: 'none' }));
      }
    }
    svg.append(inner, coast);
    const centre = prov => cells[prov] ? cells[prov].c : null;
    const place = placer();
    // Units first (at the centre of their province; a dislodged one beside it)...
    const unitLayer = sv('g', { class: 'units' });
    // A fleet's hull and sail around (x, y), coordinates to a tenth of a pixel.
    const fleetPath = (x, y) => {
      const p = (dx, dy) => `${(x + dx).toFixed(1)},${(y + dy).toFixed(1)}`;
      return `M${p(-11, -2)} L${p(11, -2)} L${p(7, 7)} L${p(-7, 7)} Z M${p(-1, -2)} L${p(-1, -12)} L${p(7, -4)} Z`;
    };
    const drawUnit = (pw, unit, dislodged) => {
      const prov = provOf(unit), c = centre(prov);
      if (!c) return;
      const [cx, cy] = dislodged ? [c[0] + 14, c[1] + 12] : c;
      place.add({ x1: cx - 11, y1: cy - 12, x2: cx + 11, y2: cy + 9 });
      const col = POWER_COLOURS[pw] || '#000';
      const isFleet = unit[0] === 'F';
      const shape = isFleet
        ? sv('path', { d: fleetPath(cx, cy), fill: col, stroke: dislodged ? '#c00000' : '#fff', 'stroke-width': dislodged ? 3 : 1.2 })
        : sv('circle', { cx, cy, r: 9, fill: col, stroke: dislodged ? '#c00000' : '#fff', 'stroke-width': dislodged ? 3 : 1.5 });
      unitLayer.append(sv('g', { class: 'unit', 'data-unit': unit, 'data-prov': prov, 'data-power': pw, 'data-kind': isFleet ? 'F' : 'A', 'data-dislodged': dislodged ? 'true' : 'false' },
        shape, sv('text', { x: cx, y: cy + 4, 'text-anchor': 'middle', 'font-size': 10, fill: '#fff', 'font-weight': 'bold', text: isFleet ? '' : 'A' })));
    };
    for (const [pw, list] of Object.entries(state.units || {})) for (const u of list) drawUnit(pw, u, false);
    for (const [pw, m] of Object.entries(state.dislodged || {})) for (const u of Object.keys(m)) drawUnit(pw, u, true);
    // ...then supply-centre markers and names, each where it overlaps nothing drawn before.
    const labelLayer = sv('g', { class: 'labels' });
    for (const [k, cell] of Object.entries(cells)) {
      const p = provs[k];
      if (!p || !p.sc) continue;
      const [cx, cy] = cell.c, r = 6;
      const b = place.best([[16, 11], [-16, 11], [16, -11], [-16, -11], [0, 18], [0, -20], [24, 0], [-24, 0]].map(([dx, dy]) => ({ x1: cx + dx - r - 1, y1: cy + dy - r - 1, x2: cx + dx + r + 1, y2: cy + dy + r + 1 })));
      const o = owner[k];
      labelLayer.append(sv('circle', { cx: (b.x1 + b.x2) / 2, cy: (b.y1 + b.y2) / 2, r, fill: o ? POWER_COLOURS[o] : '#fff', stroke: '#222', 'stroke-width': 1.2, class: 'sc', 'data-prov': k, 'data-owner': o || '' }, sv('title', { text: `${p.name}: supply centre${o ? ' of ' + o : ', unowned'}` })));
    }
    for (const [k, cell] of Object.entries(cells)) {
      const p = provs[k];
      if (!p) continue;
      const [cx, cy] = cell.c, fs = 11, w = k.length * fs * 0.72 + 4, h = fs + 3;
      const cands = [];
      for (const d of [16, 24, 32]) for (const [dx, dy] of [[0, -d - 2], [0, d + 4], [d + 8, 0], [-d - 8, 0], [d + 4, -d], [-d - 4, -d], [d + 4, d], [-d - 4, d]]) {
        cands.push({ x1: cx + dx - w / 2, y1: cy + dy - h / 2, x2: cx + dx + w / 2, y2: cy + dy + h / 2 });
      }
      const b = place.best(cands);
      const sea = p.kind === 'sea';
      const bg = sea ? SEA : control[k] ? TERRITORY[control[k]] : LAND;
      labelLayer.append(sv('text', { class: 'prov-label', 'data-prov': k, x: ((b.x1 + b.x2) / 2).toFixed(1), y: ((b.y1 + b.y2) / 2 + fs * 0.36).toFixed(1), 'text-anchor': 'middle', 'font-size': fs, 'font-weight': 'bold', 'font-style': sea ? 'italic' : 'normal', fill: sea ? '#143a5c' : '#2a2110', stroke: bg, 'stroke-width': 3, 'paint-order': 'stroke', 'stroke-linejoin': 'round', text: k }, sv('title', { text: p.name })));
    }
    const orderLayer = sv('g', { class: 'orders' });
    for (const r of s.records || []) for (const o of r.orders) {
      const a = centre(o.unit), failed = isFailed(o);
      if (!a) continue;
      const col = failed ? '#c00000' : '#222';
      const attrs = { class: 'order', 'data-kind': o.kind, 'data-unit': o.unit, 'data-result': o.result || '', 'data-reason': o.reason || '' };
      const tip = sv('title', { text: `${o.power}: ${o.text} — ${o.result || ''}${o.reason ? ' (' + o.reason + ')' : ''}` });
      if (o.kind === 'move' || o.kind === 'retreat') {
        const b = centre(o.dest);
        if (!b) continue;
        orderLayer.append(sv('line', Object.assign({ x1: a[0], y1: a[1], x2: b[0], y2: b[1], stroke: o.kind === 'retreat' ? '#d46a00' : col, 'stroke-width': 3, 'marker-end': `url(#arrow-${failed ? 'bad' : 'ok'})`, 'stroke-dasharray': failed ? '7 4' : null }, attrs), tip));
      } else if (o.kind === 'support_move' || o.kind === 'support_hold' || o.kind === 'convoy') {
        const t = centre(o.target), d = o.dest ? centre(o.dest) : null;
        if (!t) continue;
        const end = d ? [(t[0] + d[0]) / 2, (t[1] + d[1]) / 2] : t;
        orderLayer.append(sv('line', Object.assign({ x1: a[0], y1: a[1], x2: end[0], y2: end[1], stroke: o.kind === 'convoy' ? '#1d5fa8' : col, 'stroke-width': 2, 'stroke-dasharray': o.kind === 'convoy' ? '2 4' : '6 4' }, attrs), tip));
        orderLayer.append(sv('circle', { cx: end[0], cy: end[1], r: 4, fill: 'none', stroke: o.kind === 'convoy' ? '#1d5fa8' : col, 'stroke-width': 2 }));
      } else if (o.kind === 'hold') {
        orderLayer.append(sv('rect', Object.assign({ x: a[0] - 13, y: a[1] - 13, width: 26, height: 26, fill: 'none', stroke: col, 'stroke-width': 2 }, attrs), tip));
      } else if (o.kind === 'build') {
        orderLayer.append(sv('text', Object.assign({ x: a[0] - 16, y: a[1] - 6, 'font-size': 20, fill: '#0a7d00', 'font-weight': 'bold', text: '+' }, attrs), tip));
      } else if (o.kind === 'disband') {
        orderLayer.append(sv('text', Object.assign({ x: a[0] - 6, y: a[1] + 7, 'font-size': 22, fill: '#c00000', 'font-weight': 'bold', text: '×' }, attrs), tip));
      }
    }
    svg.append(orderLayer, unitLayer, labelLayer);
    out.append(el('h3', { text: s.end ? 'end of the game' : `phase ${s.phase}` }));
    const counts = x.powers.map(p => (state.centers && state.centers[p] ? state.centers[p].length : 0));
    // Legend: one colour per power (its territories tinted, its units and centres in full).
    const legend = el('div', { id: 'dip-legend', class: 'legend' });
    x.powers.forEach((p, i) => legend.append(el('span', { class: 'legend-item', 'data-power': p },
      el('span', { class: 'chip', style: `background:${TERRITORY[p]};border:2px solid ${POWER_COLOURS[p]}` }),
      el('span', { style: `color:${POWER_COLOURS[p]};font-weight:bold`, text: p }), ` ${seatName(i)} · ${counts[i]} centres`)));
    out.append(legend, svg);
    out.append(el('div', { class: 'legend', id: 'dip-symbols' },
      el('span', { class: 'legend-item' }, el('span', { class: 'chip', style: `background:${LAND}` }), 'neutral land'),
      el('span', { class: 'legend-item' }, el('span', { class: 'chip', style: `background:${SEA}` }), 'sea'),
      el('span', { class: 'legend-item' }, el('span', { class: 'chip', style: `background:${COAST};height:.25rem` }), 'coastline'),
      el('span', { class: 'legend-item' }, el('span', { class: 'chip', style: 'background:repeating-linear-gradient(45deg,#e4ddca 0 3px,#b3a88c 3px 5px)' }), 'impassable'),
      el('span', { class: 'legend-item' }, sv('svg', { viewBox: '0 0 24 24', width: 16, height: 16 }, sv('circle', { cx: 12, cy: 12, r: 9, fill: '#555' })), 'army'),
      el('span', { class: 'legend-item' }, sv('svg', { viewBox: '0 0 24 24', width: 18, height: 18 }, sv('path', { d: 'M1,14 L23,14 L19,23 L5,23 Z M11,14 L11,3 L19,11 Z', fill: '#555' })), 'fleet'),
      el('span', { class: 'legend-item', text: 'small dot: supply centre in its owner\'s colour (white: unowned)' }),
      el('span', { class: 'legend-item', text: 'arrow: move (dashed red: failed) · dashed line: support · dotted blue: convoy · square: hold · + build · × disband · red outline: dislodged' })));
    out.append(table(['power', 'entrant', 'centres', 'units'], x.powers.map((p, i) => el('tr', { 'data-power': p },
      el('td', { style: `color:${POWER_COLOURS[p]};font-weight:bold`, text: p }), el('td', { text: seatName(i) }),
      el('td', { class: 'num centres', text: s.state ? counts[i] : '' }), el('td', { class: 'num', text: s.state && state.units && state.units[p] ? state.units[p].length : 0 }))), { id: 'dip-powers' }));
    for (const r of s.records || []) {
      out.append(el('h4', { text: `orders ${r.phase}` }));
      const rows = r.orders.map(o => el('tr', { class: isFailed(o) ? 'fails' : '', 'data-unit': o.unit || '' },
        el('td', { text: o.power }), el('td', { text: o.text }), el('td', { class: 'order-result', text: o.result || '' }), el('td', { class: 'reason', text: o.reason || '' })));
      for (const u of r.unapplied || []) rows.push(el('tr', { class: 'fails unapplied' },
        el('td', { text: u.power }), el('td', { text: u.text }), el('td', { class: 'order-result', text: 'void (not applied)' }), el('td', { class: 'reason', text: u.reason })));
      out.append(table(['power', 'order', 'result', 'why'], rows, { class: 'dip-orders' }));
      if (r.destroyed && r.destroyed.length) out.append(el('p', { class: 'err', text: 'destroyed: ' + r.destroyed.join(', ') }));
    }
    if (s.press && s.press.length) {
      out.append(el('h4', { text: 'press' }), table(['round', 'from', 'to', 'message'], s.press.map(m => el('tr', {}, el('td', { class: 'num', text: m.round }), el('td', { text: m.from }), el('td', { text: m.to }), el('td', { text: m.text }))), { id: 'dip-press' }));
    }
    if (s.draw_votes && s.draw_votes.length) out.append(el('p', { text: 'draw votes: ' + s.draw_votes.join(', ') }));
    out.append(el('h4', { text: 'supply centres per year' }), dipChart(x));
    if (at === steps.length - 1 && model.result) {
      const r = model.result;
      out.append(el('div', { class: 'result', id: 'kv-result', text: (r.winner ? `solo victory: ${r.winner}` : `end: ${r.reason}`) + ' · centres ' + x.powers.map((p, i) => `${p} ${r.centers[i]}`).join(', ') }));
    }
    return out;
  }
  function dipChart(x) {
    const pts = x.chart, W = 600, H = 220, L = 30, B = 20;
    const svg = sv('svg', { viewBox: `0 0 ${W} ${H}`, width: W, id: 'dip-chart' });
    const max = 18, n = Math.max(1, pts.length - 1);
    const X = i => L + (W - L - 10) * i / n, Y = v => H - B - (H - B - 10) * Math.min(v, 34) / max;
    for (let v = 0; v <= max; v += 6) {
      svg.append(sv('line', { x1: L, x2: W - 10, y1: Y(v), y2: Y(v), stroke: '#ddd' }), sv('text', { x: 4, y: Y(v) + 4, 'font-size': 10, text: v }));
    }
    pts.forEach((p, i) => { if (i % Math.ceil(pts.length / 12) === 0 || i === pts.length - 1) svg.append(sv('text', { x: X(i), y: H - 4, 'font-size': 10, 'text-anchor': 'middle', text: p.label })); });
    x.powers.forEach((pw, k) => {
      svg.append(sv('polyline', { points: pts.map((p, i) => `${X(i)},${Y(p.counts[k])}`).join(' '), fill: 'none', stroke: POWER_COLOURS[pw], 'stroke-width': 2, 'data-power': pw }));
    });
    return svg;
  }

  // ---------------------------------------------------------------- dispatch
  const renderers = { geister, nac, 'religion-war': nac, werewolf, 'werewolf-nlp': werewolf, diplomacy };
  const viewer = renderers[model.game] || (model.extra && model.extra.generic ? generic : null);
  function render() {
    const r = viewer;
    stage.replaceChildren(steps.length ? r(steps[at]) : el('p', { text: 'this replay has no steps' }));
  }
  // Whose eyes: the referee's (everything) or one seat's (only what it could see).
  if (model.game === 'geister' || model.game === 'nac' || model.game === 'religion-war') {
    viewSel = el('select', { id: 'kv-perspective', 'aria-label': 'perspective' },
      el('option', { value: 'referee', text: model.game === 'geister' ? 'referee (all colours)' : 'referee (everything)' }),
      ...model.seats.map((st, i) => el('option', { value: 'seat' + i, text: `as seat ${i} (${st.name}) saw it` })));
    viewSel.onchange = () => { setView(viewSel.value); go(at); };
    extraCtl.append(viewSel);
    const v = viewFromHash();
    if (v && Number(v.slice(4)) < model.seats.length) setView(v); else setView('referee');
  }
  if (model.game === 'werewolf' || model.game === 'werewolf-nlp') {
    const sel = el('select', { id: 'kv-wwview', 'aria-label': 'view' },
      el('option', { value: 'public', text: 'public view' }), el('option', { value: 'wolves', text: "werewolves' view" }), el('option', { value: 'omniscient', text: 'omniscient' }));
    sel.onchange = () => { opts.ww = sel.value; render(); };
    const ag = el('select', { id: 'kv-agent', 'aria-label': 'agent filter' }, el('option', { value: 0, text: 'all agents' }),
      ...model.seats.map((_, i) => el('option', { value: i + 1, text: agentName(i + 1) })));
    ag.onchange = () => { opts.agent = Number(ag.value); render(); };
    extraCtl.append(sel, ag);
  }
  if (!viewer) throw new Error('no viewer for ' + model.game);
  drawPanels();
  const t0 = fromHash();
  // A match being played opens at its last step (the live page follows it).
  go(t0 === null ? (model.live ? steps.length - 1 : 0) : t0, true);
  root.dataset.renderMs = performance.now().toFixed(0);
  root.dataset.ready = 'true';
})();
