// Kakehiki replay viewer: plain JavaScript and SVG, no network access, no external assets.
// Reads the view model from <script id="kv-model" type="application/json"> and draws it into #kv.
(function () {
  'use strict';
  const NS = 'http://www.w3.org/2000/svg';
  const root = document.getElementById('kv');
  const model = JSON.parse(document.getElementById('kv-model').textContent);
  const steps = model.steps || [];
  let at = 0, timer = null, speed = 1;
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
  const seatName = i => (model.seats[i] && model.seats[i].name) || ('seat ' + i);

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
    const m = /(?:^#|&)t=(\d+)/.exec(location.hash);
    return m ? Number(m[1]) : null;
  }
  window.addEventListener('hashchange', () => { const t = fromHash(); if (t !== null && t !== at) go(t, true); });
  function go(i, fromLink) {
    at = Math.max(0, Math.min(steps.length - 1, i | 0));
    slider.value = at;
    const s = steps[at];
    pos.textContent = ` ${model.unit} step ${at} of ${steps.length - 1}: ${s ? s.title : ''}`;
    link.href = '#t=' + at;
    if (!fromLink && history.replaceState) history.replaceState(null, '', '#t=' + at);
    root.dataset.step = at;
    render();
  }

  // ---------------------------------------------------------------- side panels
  function drawPanels() {
    panels.replaceChildren();
    model.seats.forEach((s, i) => {
      const box = el('div', { class: 'seat', 'data-seat': i });
      box.append(el('h4', { text: seatLabel(i) }));
      const mean = s.moves ? (s.total_ms / s.moves) : 0;
      box.append(el('div', { class: 'muted', text: `${s.moves} replies · mean ${mean.toFixed(1)} ms · max ${s.max_ms.toFixed(1)} ms` }));
      if (s.errors.length) {
        const ul = el('ul', { class: 'errors' });
        for (const e of s.errors.slice(0, 200)) {
          ul.append(el('li', { class: 'err' },
            el('a', { href: '#t=' + e.step, text: model.unit + ' ' + e.step }), ': ' + e.kind + ' — ' + e.detail));
        }
        if (s.errors.length > 200) ul.append(el('li', { text: `… ${s.errors.length - 200} more` }));
        box.append(ul);
      } else box.append(el('div', { class: 'muted', text: 'no errors' }));
      if (typeof s.stderr === 'string') {
        box.append(el('details', {}, el('summary', { text: 'stderr (' + s.stderr.length + ' bytes)' }), el('pre', { class: 'stderr', text: s.stderr })));
      }
      panels.append(box);
    });
  }
  function seatLabel(i) {
    if (model.game === 'diplomacy') return `${model.extra.powers[i]} — ${seatName(i)}`;
    if (model.game === 'werewolf' || model.game === 'werewolf-nlp') return `${agentName(i + 1)} — ${seatName(i)}`;
    return `seat ${i} — ${seatName(i)}`;
  }

  // ---------------------------------------------------------------- Geister
  function geister(s) {
    const C = 64, P = 20;
    const view = opts.view;
    const svg = sv('svg', { viewBox: `0 0 ${6 * C + 2 * P} ${6 * C + 2 * P}`, width: 6 * C + 2 * P, id: 'geister-board' });
    for (let y = 0; y < 6; y++) for (let x = 0; x < 6; x++) {
      svg.append(sv('rect', { x: P + x * C, y: P + y * C, width: C, height: C, fill: (x + y) % 2 ? '#e9dcc0' : '#f6ecd6', stroke: '#b9a67a' }));
    }
    // Exits: seat 0 leaves through the top corners, seat 1 through the bottom ones.
    for (const [x, y, seat] of [[0, 0, 0], [5, 0, 0], [0, 5, 1], [5, 5, 1]]) {
      svg.append(sv('text', { x: P + x * C + C / 2, y: y === 0 ? P - 5 : P + 6 * C + 15, 'text-anchor': 'middle', 'font-size': 12, fill: seat ? '#7a4b00' : '#004b7a', class: 'exit', text: `exit (seat ${seat})` }));
      svg.append(sv('rect', { x: P + x * C + 3, y: P + y * C + 3, width: C - 6, height: C - 6, fill: 'none', stroke: seat ? '#7a4b00' : '#004b7a', 'stroke-dasharray': '4 3' }));
    }
    if (s.from) {
      const [fx, fy] = s.from;
      svg.append(sv('rect', { x: P + fx * C, y: P + fy * C, width: C, height: C, fill: 'rgba(255,220,0,.35)', class: 'last-from' }));
      if (s.to) {
        const [tx, ty] = s.to;
        svg.append(sv('rect', { x: P + tx * C, y: P + ty * C, width: C, height: C, fill: 'rgba(255,220,0,.55)', class: 'last-to' }));
        svg.append(sv('line', { x1: P + fx * C + C / 2, y1: P + fy * C + C / 2, x2: P + tx * C + C / 2, y2: P + ty * C + C / 2, stroke: '#b08000', 'stroke-width': 3 }));
      }
    }
    for (const g of s.board.pieces) {
      const known = view === 'referee' || view === 'seat' + g.seat;
      const colour = known ? (g.red ? 'red' : 'blue') : 'unknown';
      const fill = colour === 'red' ? '#d63a3a' : colour === 'blue' ? '#2f6fd6' : '#9a9a9a';
      const cx = P + g.x * C + C / 2, cy = P + g.y * C + C / 2;
      const body = g.seat === 0
        ? `M${cx - 20},${cy + 20} L${cx - 20},${cy - 4} Q${cx},${cy - 30} ${cx + 20},${cy - 4} L${cx + 20},${cy + 20} Z`
        : `M${cx - 20},${cy - 20} L${cx - 20},${cy + 4} Q${cx},${cy + 30} ${cx + 20},${cy + 4} L${cx + 20},${cy - 20} Z`;
      svg.append(sv('g', { class: 'ghost', 'data-seat': g.seat, 'data-label': g.label, 'data-x': g.x, 'data-y': g.y, 'data-colour': colour },
        sv('path', { d: body, fill, stroke: g.seat === 0 ? '#002a55' : '#553000', 'stroke-width': 3 }),
        sv('text', { x: cx, y: cy + 6, 'text-anchor': 'middle', 'font-size': 16, fill: '#fff', 'font-weight': 'bold', text: g.label })));
    }
    const out = el('div');
    const lines = [];
    if (s.ply) {
      let t = `ply ${s.ply}: seat ${s.seat} (${seatName(s.seat)}) `;
      if (s.move) t += `moved ${s.move}` + (s.escaped ? ' and escaped' : '') + (s.captured ? `, capturing ${s.captured.red ? 'red' : 'blue'} ${s.captured.label}` : '');
      else t += `${s.outcome}` + (s.raw !== null && s.raw !== undefined ? ` (sent ${JSON.stringify(s.raw)})` : '') + (s.reason ? `: ${s.reason}` : '');
      t += ` · ${s.elapsed_ms} ms`;
      lines.push(el('p', { id: 'geister-move', text: t }));
    }
    for (const n of s.notes || []) lines.push(el('p', { class: 'notes', text: n }));
    const trays = el('div', { class: 'trays' });
    [0, 1].forEach(seat => {
      const items = s.board.off[seat].map(o => el('span', { class: 'off', 'data-seat': seat, 'data-label': o.label, 'data-how': o.how, style: `color:${o.red ? '#d63a3a' : '#2f6fd6'};margin-right:.5rem`, text: `${o.label} (${o.red ? 'red' : 'blue'}, ${o.how})` }));
      trays.append(el('div', {}, el('strong', { text: `seat ${seat} lost: ` }), ...(items.length ? items : [el('span', { class: 'muted', text: 'none' })])));
    });
    out.append(el('div', { class: 'muted', text: 'seat 0 (' + seatName(0) + ') plays from the bottom; seat 1 (' + seatName(1) + ') from the top' }), svg, trays, ...lines);
    if (at === steps.length - 1 && model.result) out.append(el('div', { class: 'result', id: 'kv-result', text: geisterResult(model.result) }));
    return out;
  }
  function geisterResult(r) {
    if (!r) return '';
    const who = r.winner === null || r.winner === undefined ? (r.draw ? 'draw' : 'no winner') : `winner: seat ${r.winner} (${seatName(r.winner)})`;
    return `${who} · end: ${r.reason} · ${r.plies} plies` + (r.scores ? ` · scores ${r.scores.join(' : ')}` : '');
  }

  // ---------------------------------------------------------------- NAC / Religion War
  function nac(s) {
    const x = model.extra, noun = x.noun, out = el('div');
    const Noun = noun[0].toUpperCase() + noun.slice(1);
    out.append(el('h3', { text: s.turn ? `turn ${s.turn}: ${s.day ? 'day' : 'night'} (${s.label})` : 'before turn 1' }));
    const head = [Noun, 'strength'];
    for (let i = 0; i < 4; i++) head.push(`seat ${i} revealed`, `seat ${i} real`);
    const rows = [];
    for (let t = 0; t < x.targets; t++) {
      const r = el('tr', { 'data-lord': t });
      r.append(el('td', { text: `${Noun} ${t + 1}` }), el('td', { class: 'num', text: x.weights[t] }));
      for (let i = 0; i < 4; i++) {
        r.append(el('td', { class: 'num', 'data-lord': t, 'data-seat': i, 'data-kind': 'revealed', text: s.public[t][i] }));
        r.append(el('td', { class: 'num muted', 'data-lord': t, 'data-seat': i, 'data-kind': 'real', text: s.real[t][i] }));
      }
      rows.push(r);
    }
    out.append(table(head, rows, { id: 'nac-affection' }));
    out.append(el('p', { class: 'muted', text: `Revealed: what every player sees (day picks count publicly${x.reveal_after ? `, and after turn ${x.reveal_after} everything is revealed` : ''}). Real: the true affection, known to its player; shown here after the game.` }));
    if (s.moves && s.moves.length) {
      out.append(table(['seat', 'status', 'reply', 'picks (' + noun + 's)', 'time (ms)', 'errors'], s.moves.map(m => el('tr', { 'data-seat': m.seat },
        el('td', { text: seatName(m.seat) }), el('td', { text: m.status }), el('td', { text: m.raw !== undefined ? m.raw : (m.raw_b64 ? '(binary)' : '') }),
        el('td', { class: 'picks', text: (m.picks || []).map(p => p + 1).join(' ') }),
        el('td', { class: 'num', text: m.time_us !== undefined ? (m.time_us / 1000).toFixed(1) : '' }),
        el('td', { class: 'err', text: (m.errors || []).map(e => e.code).join(', ') + (m.detail ? ' ' + m.detail : '') }))), { id: 'nac-moves' }));
    }
    for (const d of s.deaths || []) out.append(el('p', { class: 'err', text: `${seatName(d.seat)} is out: ${d.reason} — ${d.detail}` }));
    const sc = [];
    for (let i = 0; i < 4; i++) sc.push(el('tr', { 'data-seat': i }, el('td', { text: seatName(i) }),
      el('td', { class: 'num', text: s.scoring ? s.scoring[i] : '' }), el('td', { class: 'num total', 'data-seat': i, text: s.totals[i] })));
    out.append(table(['seat', s.scoring ? `scored after turn ${s.turn}` : 'scored this turn', 'running total'], sc, { id: 'nac-scores' }));
    if (at === steps.length - 1 && model.result) {
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
    out.append(el('h3', { text: `day ${s.day}` }));
    const alive = el('div', { id: 'ww-alive' });
    s.alive.forEach((a, i) => alive.append(el('span', { class: a ? '' : 'dead', 'data-agent': i + 1, style: 'margin-right:.6rem', text: agentName(i + 1) + (showRoles ? ` (${x.roles[i]})` : '') })));
    out.append(el('div', {}, el('strong', { text: 'at dawn: ' }), alive));
    // Free text (natural-language division) has no protocol reading: no reading column.
    const free = model.game === 'werewolf-nlp';
    const head = free ? ['turn', 'agent', 'said'] : ['turn', 'agent', 'said', 'reading'];
    const talkRows = (list, cls) => list.filter(t => keep(t.agent)).map(t => el('tr', { class: cls, 'data-agent': t.agent },
      el('td', { class: 'num', text: t.turn }), el('td', { text: agentName(t.agent) }), el('td', { class: 'said', text: t.text }), ...(free ? [] : [el('td', { text: t.english })])));
    out.append(el('h4', { text: 'talk' }), el('div', { class: 'scroll' }, table(head, talkRows(s.talk, 'talk'), { id: 'ww-talk' })));
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
    if (night.length) out.append(el('h4', { text: 'executed and night' }), el('ul', {}, ...night));
    if (s.result) out.append(el('p', { text: `left: ${s.result.humans} humans, ${s.result.werewolves} werewolves` }));
    if (last && model.result) {
      out.append(el('div', { class: 'result', id: 'kv-result', text: model.result.winner ? `the ${model.result.winner} team wins (day ${model.result.day})` : `no winner: the game was cut short${model.result.aborted ? ' (too many agents in error)' : ''} (day ${model.result.day})` }));
      out.append(table(['agent', 'entrant', 'role'], x.roles.map((r, i) => el('tr', { 'data-agent': i + 1 }, el('td', { text: agentName(i + 1) }), el('td', { text: seatName(i) }), el('td', { class: 'role', text: r }))), { id: 'ww-roles' }));
    }
    return out;
  }

  // ---------------------------------------------------------------- Diplomacy
  const POWER_COLOURS = { AUSTRIA: '#c0392b', ENGLAND: '#1f3f8f', FRANCE: '#3fa7e0', GERMANY: '#4d4d4d', ITALY: '#2e8b57', RUSSIA: '#8e44ad', TURKEY: '#d4a017' };
  let dipCells = null;
  function dipGeometry() {
    if (dipCells) return dipCells;
    const pts = window.KAKEHIKI_DIP_CENTRES;
    const W = 980, H = 840;
    const proj = ([lon, lat]) => [(lon + 25) * 14, (72 - lat) * 20];
    const sites = Object.entries(pts).map(([k, ll]) => [k, proj(ll)]);
    const cells = {};
    for (const [k, a] of sites) {
      let poly = [[0, 0], [W, 0], [W, H], [0, H]];
      for (const [k2, b] of sites) {
        if (k2 === k) continue;
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
      cells[k] = { poly, c: a };
    }
    dipCells = cells;
    return cells;
  }
  const provOf = unit => unit.split(' ')[1].split('/')[0];
  function diplomacy(s) {
    const x = model.extra, cells = dipGeometry(), out = el('div');
    const provs = {};
    for (const p of x.provinces) provs[p.abbr] = p;
    const owner = {};
    const state = s.state || {};
    for (const [pw, list] of Object.entries(state.centers || {})) for (const c of list) owner[c] = pw;
    const svg = sv('svg', { viewBox: '0 0 980 840', width: 980, id: 'dip-map' });
    const defs = sv('defs');
    for (const [id, col] of [['ok', '#222'], ['bad', '#c00000']]) {
      defs.append(sv('marker', { id: 'arrow-' + id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse' }, sv('path', { d: 'M0,0 L10,5 L0,10 z', fill: col })));
    }
    svg.append(defs);
    for (const [k, cell] of Object.entries(cells)) {
      const p = provs[k];
      const fill = !p ? '#cfcfcf' : p.kind === 'sea' ? '#bcd8ef' : '#efe6cf';
      svg.append(sv('polygon', { points: cell.poly.map(q => q.map(v => v.toFixed(1)).join(',')).join(' '), fill, stroke: p && p.kind === 'sea' ? '#8fb3d3' : '#a89a78', 'stroke-width': 1, class: 'province', 'data-prov': k, 'data-kind': p ? p.kind : 'impassable' }));
    }
    for (const [k, cell] of Object.entries(cells)) {
      const p = provs[k];
      if (!p) continue;
      const [cx, cy] = cell.c;
      svg.append(sv('text', { x: cx, y: cy - 13, 'text-anchor': 'middle', 'font-size': 10, fill: p.kind === 'sea' ? '#39628a' : '#5a4a2a', text: k }));
      if (p.sc) {
        const o = owner[k];
        svg.append(sv('circle', { cx: cx + 15, cy: cy + 12, r: 6, fill: o ? POWER_COLOURS[o] : '#fff', stroke: '#333', class: 'sc', 'data-prov': k, 'data-owner': o || '' }));
      }
    }
    const centre = prov => cells[prov] ? cells[prov].c : null;
    const drawUnit = (pw, unit, dislodged) => {
      const prov = provOf(unit), c = centre(prov);
      if (!c) return;
      const [cx, cy] = dislodged ? [c[0] + 12, c[1] + 10] : c;
      const col = POWER_COLOURS[pw] || '#000';
      const isFleet = unit[0] === 'F';
      const shape = isFleet
        ? sv('path', { d: `M${cx - 11},${cy - 2} L${cx + 11},${cy - 2} L${cx + 7},${cy + 7} L${cx - 7},${cy + 7} Z M${cx - 1},${cy - 2} L${cx - 1},${cy - 12} L${cx + 7},${cy - 4} Z`, fill: col, stroke: dislodged ? '#c00000' : '#fff', 'stroke-width': dislodged ? 3 : 1.2 })
        : sv('circle', { cx, cy, r: 9, fill: col, stroke: dislodged ? '#c00000' : '#fff', 'stroke-width': dislodged ? 3 : 1.5 });
      svg.append(sv('g', { class: 'unit', 'data-unit': unit, 'data-prov': prov, 'data-power': pw, 'data-kind': isFleet ? 'F' : 'A', 'data-dislodged': dislodged ? 'true' : 'false' },
        shape, sv('text', { x: cx, y: cy + 4, 'text-anchor': 'middle', 'font-size': 10, fill: '#fff', 'font-weight': 'bold', text: isFleet ? '' : 'A' })));
    };
    for (const [pw, list] of Object.entries(state.units || {})) for (const u of list) drawUnit(pw, u, false);
    for (const [pw, m] of Object.entries(state.dislodged || {})) for (const u of Object.keys(m)) drawUnit(pw, u, true);
    const orderLayer = sv('g', { class: 'orders' });
    for (const r of s.records || []) for (const o of r.orders) {
      const a = centre(o.unit), failed = o.result === 'fails' || o.result === 'void';
      if (!a) continue;
      const col = failed ? '#c00000' : '#222';
      const attrs = { class: 'order', 'data-kind': o.kind, 'data-unit': o.unit, 'data-result': o.result || '' };
      if (o.kind === 'move' || o.kind === 'retreat') {
        const b = centre(o.dest);
        if (!b) continue;
        orderLayer.append(sv('line', Object.assign({ x1: a[0], y1: a[1], x2: b[0], y2: b[1], stroke: o.kind === 'retreat' ? '#d46a00' : col, 'stroke-width': 3, 'marker-end': `url(#arrow-${failed ? 'bad' : 'ok'})`, 'stroke-dasharray': failed ? '7 4' : null }, attrs)));
      } else if (o.kind === 'support_move' || o.kind === 'support_hold' || o.kind === 'convoy') {
        const t = centre(o.target), d = o.dest ? centre(o.dest) : null;
        if (!t) continue;
        const end = d ? [(t[0] + d[0]) / 2, (t[1] + d[1]) / 2] : t;
        orderLayer.append(sv('line', Object.assign({ x1: a[0], y1: a[1], x2: end[0], y2: end[1], stroke: o.kind === 'convoy' ? '#1d5fa8' : col, 'stroke-width': 2, 'stroke-dasharray': o.kind === 'convoy' ? '2 4' : '6 4' }, attrs)));
        orderLayer.append(sv('circle', { cx: end[0], cy: end[1], r: 4, fill: 'none', stroke: o.kind === 'convoy' ? '#1d5fa8' : col, 'stroke-width': 2 }));
      } else if (o.kind === 'hold') {
        orderLayer.append(sv('rect', Object.assign({ x: a[0] - 13, y: a[1] - 13, width: 26, height: 26, fill: 'none', stroke: col, 'stroke-width': 2 }, attrs)));
      } else if (o.kind === 'build') {
        orderLayer.append(sv('text', Object.assign({ x: a[0] - 16, y: a[1] - 6, 'font-size': 20, fill: '#0a7d00', 'font-weight': 'bold', text: '+' }, attrs)));
      } else if (o.kind === 'disband') {
        orderLayer.append(sv('text', Object.assign({ x: a[0] - 6, y: a[1] + 7, 'font-size': 22, fill: '#c00000', 'font-weight': 'bold', text: '×' }, attrs)));
      }
    }
    svg.append(orderLayer);
    out.append(el('h3', { text: s.end ? 'end of the game' : `phase ${s.phase}` }));
    const legend = el('div', { class: 'muted', text: 'land: beige · sea: blue · ● army · ⛵ fleet · dot: supply centre in its owner\'s colour · arrow: move (dashed red: failed) · dashed line: support · dotted blue: convoy · square: hold · + build · × disband · red outline: dislodged' });
    out.append(svg, legend);
    const counts = x.powers.map(p => (state.centers && state.centers[p] ? state.centers[p].length : 0));
    out.append(table(['power', 'entrant', 'centres', 'units'], x.powers.map((p, i) => el('tr', { 'data-power': p },
      el('td', { style: `color:${POWER_COLOURS[p]};font-weight:bold`, text: p }), el('td', { text: seatName(i) }),
      el('td', { class: 'num centres', text: s.state ? counts[i] : '' }), el('td', { class: 'num', text: s.state && state.units && state.units[p] ? state.units[p].length : 0 }))), { id: 'dip-powers' }));
    for (const r of s.records || []) {
      out.append(el('h4', { text: `orders ${r.phase}` }));
      out.append(table(['power', 'order', 'result'], r.orders.map(o => el('tr', { class: (o.result === 'fails' || o.result === 'void') ? 'fails' : '' },
        el('td', { text: o.power }), el('td', { text: o.text }), el('td', { text: o.result || '' }))), { class: 'dip-orders' }));
      if (r.destroyed && r.destroyed.length) out.append(el('p', { class: 'err', text: 'destroyed: ' + r.destroyed.join(', ') }));
      if (r.errors && r.errors.length) out.append(el('ul', {}, ...r.errors.map(e => el('li', { class: 'muted', text: e }))));
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
  function render() {
    const r = renderers[model.game];
    stage.replaceChildren(steps.length ? r(steps[at]) : el('p', { text: 'this replay has no steps' }));
  }
  if (model.game === 'geister') {
    const sel = el('select', { id: 'kv-perspective', 'aria-label': 'perspective' },
      el('option', { value: 'referee', text: 'referee (all colours)' }), el('option', { value: 'seat0', text: 'as seat 0 saw it' }), el('option', { value: 'seat1', text: 'as seat 1 saw it' }));
    sel.onchange = () => { opts.view = sel.value; render(); };
    extraCtl.append(sel);
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
  if (!renderers[model.game]) throw new Error('no viewer for ' + model.game);
  drawPanels();
  const t0 = fromHash();
  go(t0 === null ? 0 : t0, true);
  root.dataset.renderMs = performance.now().toFixed(0);
  root.dataset.ready = 'true';
})();
